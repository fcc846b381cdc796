package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// A seed busy running a script answers the client's CLUSTER SLOTS with BUSY:
// another seed gives the Cluster's layout, and the busy primary is named
// unread (exit 6) while the others' locks are listed, whichever seed the
// client reaches first.
func TestListSeedBusy(t *testing.T) {
	t.Parallel()
	cl, d, ctx, prefix, byNode := lockedOnEveryPrimary(t)
	busy := cl.Nodes[0]
	var others []string
	for _, n := range cl.Nodes {
		if n != busy {
			others = append(others, n.Addr)
		}
	}
	d.url = "redis://" + busy.Addr + "?addr=" + strings.Join(others, "&addr=")
	makeBusy(t, busy)
	var want []string
	for a, n := range byNode {
		if a != busy.Addr {
			want = append(want, prefix+n)
		}
	}
	slices.Sort(want)
	// The seeds are dialled at once and the first to answer is asked: a few
	// runs give the busy one its turns.
	for range 6 {
		r := cli(ctx, d, "", "list", "--json", "--timeout", "2s", "--key-prefix", prefix)
		if r.code != exitPartial || !strings.Contains(r.errOut, busy.Addr) {
			t.Fatalf("list with seed %s busy: exit %d, want %d naming it\n%s%s", busy.Addr, r.code, exitPartial, r.out, r.errOut)
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
		if !slices.Equal(got, want) || len(l.Unread) != 1 || l.Unread[0].Node != busy.Addr {
			t.Fatalf("listed %q, unread %+v; want %q and %s unread", got, l.Unread, want, busy.Addr)
		}
	}
}
