package main

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// list keeps what it lists, not every key it scans: a keyspace of many keys
// that are no locks (sessions, caches) under the prefix leaves the memory a
// run holds bounded by the locks it lists and one SCAN page, not by the
// keys scanned (up to a million with the default --max-scans).
func TestListMemoryBoundedByLocks(t *testing.T) {
	node := redistest.Server(t)
	d := deployment{url: "redis://" + node.Addr, rc: node.Client(t)}
	ctx := testCtx(t, 120*time.Second)
	prefix := redistest.Prefix(t)
	const keys, nameLen = 20000, 1000
	pad := strings.Repeat("x", nameLen)
	for from := 0; from < keys; from += 1000 {
		batch := make([]string, 0, 2000)
		for i := from; i < from+1000; i++ {
			batch = append(batch, prefix+"session:"+strconv.Itoa(i)+":"+pad, "v")
		}
		b := d.rc.B().Mset().KeyValue()
		for i := 0; i < len(batch); i += 2 {
			b = b.KeyValue(batch[i], batch[i+1])
		}
		if err := d.rc.Do(ctx, b.Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	c := newClient(t, d.rc, prefix)
	heldMutex(t, ctx, c, "order:1", "w")
	var first, most uint64
	pages := 0
	afterScanPage.Store(prefix, func(int, uint64) {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if pages == 0 {
			first = ms.HeapAlloc
		}
		pages++
		most = max(most, ms.HeapAlloc)
	})
	t.Cleanup(func() { afterScanPage.Delete(prefix) })
	r := cli(ctx, d, "", "list", "--key-prefix", prefix, "--limit", "1000")
	if r.code != exitOK || !strings.Contains(r.out, "order:1") {
		t.Fatalf("list: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	// The keys scanned take 20 MB; a page of them 1 MB.
	if grew := int64(most) - int64(first); pages < 10 || grew > 8<<20 {
		t.Errorf("the heap grew by %d MB over %d SCAN pages of %d keys of %d bytes that are no locks, want under 8 MB", grew>>20, pages, keys, nameLen)
	}
}
