package main

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// SCAN may return a key more than once; here the lock's slot moves, after
// its first primary was scanned, to a primary scanned later, so one run of
// list meets the key on both. It is listed once.
func TestListOnceWhenScanRepeatsAKey(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3)
	d := deployment{url: "redis://" + cl.Addrs[0] + "?addr=" + cl.Addrs[1] + "&addr=" + cl.Addrs[2], rc: cl.Client(t)}
	ctx := testCtx(t, 60*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix)
	// A lock on the primary list scans first (lowest address), so that the
	// node its slot moves to is scanned after it.
	first := slices.Min(cl.Addrs)
	name := ""
	for i := 0; name == ""; i++ {
		if n := "order:" + strconv.Itoa(i); cl.NodeFor(t, prefix+n).Addr == first {
			name = n
		}
	}
	heldMutex(t, ctx, c, name, "w")
	moved := false
	afterScanPage.Store(prefix, func(node int, cursor uint64) {
		if node == 0 && cursor == 0 && !moved {
			moved = true
			m := cl.StartMigration(t, prefix+name)
			m.Finish(t)
		}
	})
	t.Cleanup(func() { afterScanPage.Delete(prefix) })
	r := cli(ctx, d, "", "list", "--json", "--key-prefix", prefix)
	if r.code != exitOK {
		t.Fatalf("list: exit %d\n%s", r.code, r.errOut)
	}
	if !moved {
		t.Fatal("the lock's slot was not moved during the listing")
	}
	var l listing
	if err := json.Unmarshal([]byte(r.out), &l); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	var keys []string
	for _, lk := range l.Locks {
		keys = append(keys, lk.Key)
	}
	if len(keys) != 1 || keys[0] != prefix+name {
		t.Errorf("listed %q, want %q once", keys, prefix+name)
	}
}
