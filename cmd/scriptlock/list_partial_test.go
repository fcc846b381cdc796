package main

import (
	"slices"
	"strings"
	"testing"
)

// A Cluster primary that does not answer (down or stopped, not yet replaced) does not
// keep list from the others: it lists what the reachable primaries hold,
// names the primary it could not read, and exits 6, a partial answer.
func TestListPrimaryDown(t *testing.T) {
	t.Parallel()
	// One lock on each primary of a Cluster that serves on without one.
	cl, d, ctx, prefix, byNode := lockedOnEveryPrimary(t)
	dead := cl.Nodes[1]
	// One that stopped answering (a hung host) costs one --timeout.
	dead.Pause()
	r := cli(ctx, d, "", "list", "--json", "--timeout", "1s", "--key-prefix", prefix)
	dead.Resume()
	if r.code != exitPartial || !strings.Contains(r.errOut, dead.Addr) {
		t.Fatalf("list with primary %s stopped: exit %d, want %d naming it\n%s%s", dead.Addr, r.code, exitPartial, r.out, r.errOut)
	}
	dead.Kill()
	want := heldBesides(prefix, byNode, dead.Addr)

	r = cli(ctx, d, "", "list", "--json", "--key-prefix", prefix)
	if r.code != exitPartial || !strings.Contains(r.errOut, dead.Addr) {
		t.Fatalf("list with primary %s down: exit %d, want %d naming it\n%s%s", dead.Addr, r.code, exitPartial, r.out, r.errOut)
	}
	l, got := listedKeys(t, r.out)
	if !slices.Equal(got, want) {
		t.Errorf("listed %q, want the reachable primaries' %q", got, want)
	}
	if len(l.Unread) != 1 || l.Unread[0].Node != dead.Addr || l.Unread[0].Error == "" {
		t.Errorf("unread %+v, want %s with its error", l.Unread, dead.Addr)
	}

	// The table says it too.
	r = cli(ctx, d, "", "list", "--key-prefix", prefix)
	if r.code != exitPartial || !strings.Contains(r.errOut, dead.Addr) || !strings.Contains(r.out, byNode[cl.NodeFor(t, want[0]).Addr]) {
		t.Errorf("list (table) with primary %s down: exit %d\n%s%s", dead.Addr, r.code, r.out, r.errOut)
	}
}
