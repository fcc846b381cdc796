package main

import (
	"slices"
	"strings"
	"testing"
)

// A Cluster whose nodes do not know the address clients reach them at
// (cluster-preferred-endpoint-type unknown-endpoint, behind a load balancer)
// names no host in CLUSTER SLOTS: a client reaches each node at the host it
// asked, with the port given, as rueidis does. A primary down there is still
// a primary: named unread (exit 6), not taken for a replica and its locks
// left out of a listing that says it is complete.
func TestListUnknownEndpointPrimaryDown(t *testing.T) {
	t.Parallel()
	cl, d, ctx, prefix, byNode := lockedOnEveryPrimary(t)
	for _, n := range cl.Nodes {
		if err := n.Do(t, "CONFIG", "SET", "cluster-preferred-endpoint-type", "unknown-endpoint").Error(); err != nil {
			t.Fatal(err)
		}
	}
	dead := scannedSecond(cl, byNode)
	dead.Kill()
	r := cli(ctx, d, "", "list", "--json", "--timeout", "2s", "--key-prefix", prefix)
	if r.code != exitPartial || !strings.Contains(r.errOut, dead.Addr) {
		t.Fatalf("list with primary %s down, endpoints unknown: exit %d, want %d naming it\n%s%s", dead.Addr, r.code, exitPartial, r.out, r.errOut)
	}
	l, got := listedKeys(t, r.out)
	want := heldBesides(prefix, byNode, dead.Addr)
	if !slices.Equal(got, want) || len(l.Unread) != 1 || l.Unread[0].Node != dead.Addr {
		t.Errorf("listed %q, unread %+v; want the other primaries' %q and %s unread", got, l.Unread, want, dead.Addr)
	}
}
