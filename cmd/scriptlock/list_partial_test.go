package main

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A Cluster primary that does not answer (down or stopped, not yet replaced) does not
// keep list from the others: it lists what the reachable primaries hold,
// names the primary it could not read, and exits 6, a partial answer.
func TestListPrimaryDown(t *testing.T) {
	t.Parallel()
	// Without full coverage the other primaries keep serving their slots
	// once the Cluster marks the dead one failed.
	cl := redistest.Cluster(t, 3, redistest.WithArgs("--cluster-require-full-coverage", "no"))
	d := deployment{url: "redis://" + cl.Addrs[0] + "?addr=" + cl.Addrs[1] + "&addr=" + cl.Addrs[2], rc: cl.Client(t)}
	ctx := testCtx(t, 60*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix)
	// One lock on each primary.
	byNode := map[string]string{}
	for i := 0; len(byNode) < 3; i++ {
		n := "order:" + strconv.Itoa(i)
		if a := cl.NodeFor(t, prefix+n).Addr; byNode[a] == "" {
			byNode[a] = n
			heldMutex(t, ctx, c, n, "w")
		}
	}
	dead := cl.Nodes[1]
	// One that stopped answering (a hung host) costs one --timeout.
	dead.Pause()
	r := cli(ctx, d, "", "list", "--json", "--timeout", "1s", "--key-prefix", prefix)
	dead.Resume()
	if r.code != exitPartial || !strings.Contains(r.errOut, dead.Addr) {
		t.Fatalf("list with primary %s stopped: exit %d, want %d naming it\n%s%s", dead.Addr, r.code, exitPartial, r.out, r.errOut)
	}
	dead.Kill()
	var want []string
	for a, n := range byNode {
		if a != dead.Addr {
			want = append(want, prefix+n)
		}
	}
	slices.Sort(want)

	r = cli(ctx, d, "", "list", "--json", "--key-prefix", prefix)
	if r.code != exitPartial || !strings.Contains(r.errOut, dead.Addr) {
		t.Fatalf("list with primary %s down: exit %d, want %d naming it\n%s%s", dead.Addr, r.code, exitPartial, r.out, r.errOut)
	}
	var l listing
	if err := json.Unmarshal([]byte(r.out), &l); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	var got []string
	for _, lk := range l.Locks {
		got = append(got, lk.Key)
	}
	slices.Sort(got)
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
