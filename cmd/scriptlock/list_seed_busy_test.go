package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A seed busy running a script answers the client's CLUSTER SLOTS with BUSY:
// another seed gives the Cluster's layout, and the busy primary is named
// unread (exit 6) while the others' locks are listed. The other seeds are
// reached through a slow link, so that the busy one is the first to answer
// the client's dial, the one rueidis asks the layout of.
func TestListSeedBusy(t *testing.T) {
	t.Parallel()
	cl, d, ctx, prefix, byNode := lockedOnEveryPrimary(t)
	busy := cl.Nodes[0]
	others := slowSeeds(t, cl, busy)
	d.url = "redis://" + busy.Addr + "?addr=" + strings.Join(others, "&addr=")
	makeBusy(t, busy)
	want := heldBesides(prefix, byNode, busy.Addr)
	r := cli(ctx, d, "", "list", "--json", "--timeout", "5s", "--key-prefix", prefix)
	if r.code != exitPartial || !strings.Contains(r.errOut, busy.Addr) {
		t.Fatalf("list with seed %s busy: exit %d, want %d naming it\n%s%s", busy.Addr, r.code, exitPartial, r.out, r.errOut)
	}
	l, got := listedKeys(t, r.out)
	if !slices.Equal(got, want) || len(l.Unread) != 1 || l.Unread[0].Node != busy.Addr {
		t.Fatalf("listed %q, unread %+v; want %q and %s unread", got, l.Unread, want, busy.Addr)
	}
}

// Seeds that are no Cluster (a primary and its replica given as two) are
// refused, as rueidis refuses them when the first to answer is idle: with
// the primary busy, the replica asked alone was taken for the whole
// deployment, and list read its copy of the keyspace and exited 0, inspect
// showed it, though the URL named the primary first.
func TestSeedBusyNotACluster(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, primary.Client(t), prefix)
	heldMutex(t, ctx, c, "order:1", "w")
	waitFor(t, ctx, func() bool {
		n, err := replica.Do(t, "EXISTS", prefix+"order:1").AsInt64()
		return err == nil && n == 1
	})
	p := netproxy.New(t, replica.Addr)
	p.Delay(500 * time.Millisecond)
	makeBusy(t, primary)
	d := deployment{url: "redis://" + primary.Addr + "?addr=" + p.Addr}
	for _, args := range [][]string{{"list"}, {"inspect", "order:1"}} {
		r := cli(ctx, d, "", append([]string{"--timeout", "5s", "--key-prefix", prefix}, args...)...)
		if r.code != exitFailure || !strings.Contains(r.errOut, "BUSY") {
			t.Errorf("%s with seeds %s (busy) and its replica: exit %d, want %d and the primary's BUSY\n%s%s", args[0], primary.Addr, r.code, exitFailure, r.out, r.errOut)
		}
	}
}

// The connection that failed on the busy seed had dialled the other seeds
// too, answering after it failed: those connections are closed with it, not
// left open beside the client the command goes on with, until the process
// exits (a watch's lifetime).
func TestSeedBusyLeavesNoConnection(t *testing.T) {
	t.Parallel()
	cl, d, ctx, prefix, _ := lockedOnEveryPrimary(t)
	busy := cl.Nodes[0]
	others := slowSeeds(t, cl, busy)
	d.url = "redis://" + busy.Addr + "?client_name=seedbusy&addr=" + strings.Join(others, "&addr=")
	makeBusy(t, busy)
	open := func() int {
		var n int
		for _, node := range cl.Nodes {
			if node != busy {
				s, err := node.Do(t, "CLIENT", "LIST").ToString()
				if err != nil {
					t.Fatal(err)
				}
				n += strings.Count(s, " name=seedbusy ")
			}
		}
		return n
	}
	r := cli(ctx, d, "", "list", "--timeout", "5s", "--key-prefix", prefix)
	if r.code != exitPartial {
		t.Fatalf("list with seed %s busy: exit %d, want %d\n%s%s", busy.Addr, r.code, exitPartial, r.out, r.errOut)
	}
	// The command's own client closes within a second (its closing PING
	// crosses the slow link).
	deadline := time.Now().Add(10 * time.Second)
	for n := open(); n > 0; n = open() {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections of the command to the other seeds still open 10 s after it returned, want none", n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
