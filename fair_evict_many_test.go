package scriptlock

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An attempt that finds the lock free behind k dead waiters evicts them
// all in one call. It read each next head by its index (LINDEX), each read
// walking the list from its end: k reads and about k²/2 list steps (with
// 400,000 dead waiters 5.7 times as long as with 100,000). The heads are
// read in batches now: 2,000 dead waiters cost a few list reads, not one
// each, and the attempt still takes the lock with the queue emptied.
func TestFairEvictManyDeadHeadsReadsInBatches(t *testing.T) {
	t.Parallel()
	const n = 2000
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), sharedPrefix(t))
	ctx := testCtx(t, 30*time.Second)
	f := mustFair(t, c, "many-dead")
	past := strconv.FormatInt(time.Now().Add(-time.Minute).UnixMilli(), 10)
	for i := 0; i < n; i += 500 {
		push := []string{"RPUSH", f.queue}
		zadd := []string{"ZADD", f.timeouts}
		for j := i; j < i+500; j++ {
			w := fmt.Sprintf("44444444-0000-4000-8000-000000000000:%d", j)
			push = append(push, w)
			zadd = append(zadd, past, w)
		}
		if err := node.Do(t, push...).Error(); err != nil {
			t.Fatal(err)
		}
		if err := node.Do(t, zadd...).Error(); err != nil {
			t.Fatal(err)
		}
	}
	before := commandCalls(t, node)
	start := time.Now()
	l, err := f.TryLock(ctx, 0)
	took := time.Since(start)
	after := commandCalls(t, node)
	if err != nil || l == nil {
		t.Fatalf("TryLock past %d dead waiters: %v, %v; want the lock", n, l, err)
	}
	reads := after["lindex"] + after["lrange"] - before["lindex"] - before["lrange"]
	t.Logf("evicting %d dead waiters: %v, %d list reads", n, took, reads)
	if reads > 20 {
		t.Errorf("evicting %d dead waiters read the queue %d times (LINDEX %d, LRANGE %d): each read walks the list, want at most 20",
			n, reads, after["lindex"]-before["lindex"], after["lrange"]-before["lrange"])
	}
	for _, k := range []string{f.queue, f.timeouts} {
		if got, err := node.Do(t, "EXISTS", k).AsInt64(); err != nil || got != 0 {
			t.Errorf("%s after evicting every waiter: EXISTS %d, %v; want 0", k, got, err)
		}
	}
}
