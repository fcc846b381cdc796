package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A run whose --max-scans is spent on a primary that then goes unread stops
// before the others and prints a cursor to them: that is a partial answer
// (exit 6), not a failure to read any primary (exit 1), which would end a
// listing that the cursor continues.
func TestListMaxScansSpentOnUnreadPrimary(t *testing.T) {
	t.Parallel()
	// One lock on each primary of a Cluster that serves on without one.
	cl, d, ctx, prefix, _ := lockedOnEveryPrimary(t)
	// The primary scanned first dies once it has answered its SCAN.
	first := slices.Min(cl.Addrs)
	var dead *redistest.Node
	for _, n := range cl.Nodes {
		if n.Addr == first {
			dead = n
		}
	}
	killed := false
	afterScanPage.Store(prefix, func(node int, _ uint64) {
		if node == 0 && !killed {
			killed = true
			dead.Kill()
		}
	})
	t.Cleanup(func() { afterScanPage.Delete(prefix) })
	r := cli(ctx, d, "", "list", "--json", "--timeout", "2s", "--max-scans", "1", "--key-prefix", prefix)
	if !killed {
		t.Fatal("no primary was killed during the listing")
	}
	var l listing
	if err := json.Unmarshal([]byte(r.out), &l); err != nil {
		t.Fatalf("%v\n%s%s", err, r.out, r.errOut)
	}
	if r.code != exitPartial || l.Cursor == "" || !strings.Contains(r.errOut, dead.Addr) || strings.Contains(r.errOut, "any primary") {
		t.Errorf("list --max-scans 1, primary %s dying after its SCAN: exit %d, cursor %q; want %d, a cursor, and %s named unread\n%s%s",
			dead.Addr, r.code, l.Cursor, exitPartial, dead.Addr, r.out, r.errOut)
	}
}
