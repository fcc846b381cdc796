package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A Cluster primary that dies during the listing, after SCAN gave its keys
// and before they were read, is named unread like one that failed its SCAN:
// the other primaries' locks are listed and the exit code is 6.
func TestListPrimaryDiesAfterScan(t *testing.T) {
	t.Parallel()
	// One lock on each primary of a Cluster that serves on without one.
	cl, d, ctx, prefix, byNode := lockedOnEveryPrimary(t)
	// The primary scanned second dies once it has answered its SCAN.
	addrs := slices.Sorted(func(yield func(string) bool) {
		for a := range byNode {
			if !yield(a) {
				return
			}
		}
	})
	var dead *redistest.Node
	for _, n := range cl.Nodes {
		if n.Addr == addrs[1] {
			dead = n
		}
	}
	killed := false
	afterScanPage.Store(prefix, func(node int, _ uint64) {
		if node == 1 && !killed {
			killed = true
			dead.Kill()
		}
	})
	t.Cleanup(func() { afterScanPage.Delete(prefix) })
	r := cli(ctx, d, "", "list", "--json", "--timeout", "2s", "--key-prefix", prefix)
	if !killed {
		t.Fatal("no primary was killed during the listing")
	}
	if r.code != exitPartial || !strings.Contains(r.errOut, dead.Addr) {
		t.Fatalf("list with primary %s dying after its SCAN: exit %d, want %d naming it\n%s%s", dead.Addr, r.code, exitPartial, r.out, r.errOut)
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
	want := []string{prefix + byNode[addrs[0]], prefix + byNode[addrs[2]]}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("listed %q, want the other primaries' %q", got, want)
	}
	if len(l.Unread) != 1 || l.Unread[0].Node != dead.Addr {
		t.Errorf("unread %+v, want %s", l.Unread, dead.Addr)
	}
}
