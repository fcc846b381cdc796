package main

import (
	"slices"
	"strings"
	"testing"
)

// A Cluster primary that dies during the listing, after SCAN gave its keys
// and before they were read, is named unread like one that failed its SCAN:
// the other primaries' locks are listed and the exit code is 6.
func TestListPrimaryDiesAfterScan(t *testing.T) {
	t.Parallel()
	// One lock on each primary of a Cluster that serves on without one.
	cl, d, ctx, prefix, byNode := lockedOnEveryPrimary(t)
	// The primary scanned second dies once it has answered its SCAN.
	dead := scannedSecond(cl, byNode)
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
	l, got := listedKeys(t, r.out)
	want := heldBesides(prefix, byNode, dead.Addr)
	if !slices.Equal(got, want) {
		t.Errorf("listed %q, want the other primaries' %q", got, want)
	}
	if len(l.Unread) != 1 || l.Unread[0].Node != dead.Addr {
		t.Errorf("unread %+v, want %s", l.Unread, dead.Addr)
	}
}
