package scriptlock

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// BenchmarkFairMutexUncontended: Lock+Unlock on distinct names.
func BenchmarkFairMutexUncontended(b *testing.B) {
	node := redistest.Server(b)
	c := newTestClient(b, node.Client(b))
	ctx := context.Background()
	for _, g := range []int{1, 16} {
		b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) {
			b.ReportAllocs()
			done := reportServerTime(b, node)
			start := time.Now()
			runParallelN(b, g, func(next func() bool, id int) {
				f := mustFair(b, c, "bench:"+strconv.Itoa(id))
				for next() {
					l, err := f.Lock(ctx)
					if err != nil {
						b.Error(err)
						return
					}
					if err := f.Unlock(l); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ops/s")
			done()
		})
	}
}

// BenchmarkFairMutexQueueDepth measures the fair lock's scripts with 1, 100
// and 1,000 waiters queued (distinct owners, kept alive by a long waiter
// timeout). One op is a hand-off: the holder releases (waking the head), the
// head acquires, and the old holder queues again at the tail, so n waiters
// stay queued. server-us/op is Redis's own CPU time for the three scripts;
// O(log n) scripts keep it flat as n grows.
func BenchmarkFairMutexQueueDepth(b *testing.B) {
	node := redistest.Server(b)
	rc := node.Client(b)
	c := newTestClient(b, rc)
	ctx := context.Background()
	var runs int
	for _, n := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("queued=%d", n), func(b *testing.B) {
			runs++ // each run of the body gets a fresh lock
			f := mustFair(b, c, fmt.Sprintf("depth:%d:%d", n, runs))
			const wt = 10 * time.Minute
			pub := c.publishCommand()
			owners := make([]string, n+1)
			for i := range owners {
				owners[i] = c.ID() + ":w" + strconv.Itoa(i)
			}
			acquire := func(o string) fairReply {
				res, err := generated.FairAcquire(ctx, rc, f.m.key, f.queue, f.timeouts, f.m.fence, f.wake, time.Minute, o, fairAcquireCtl(true, false, wt, DefaultFenceIdle), pub)
				if err != nil {
					b.Fatal(err)
				}
				return decodeFairAcquire(res)
			}
			for _, o := range owners { // owners[0] holds, the others queue
				acquire(o)
			}
			if got := queueLen(b, node, f); got != int64(n) {
				b.Fatalf("queue length %d, want %d", got, n)
			}
			latch := f.m.key + ":latch:"
			var acq, rel, enq time.Duration
			holder, head := 0, 1
			b.ResetTimer()
			done := reportServerTime(b, node)
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				res, err := generated.FairRelease(ctx, rc, f.m.key, f.queue, f.timeouts, f.wake, latch+strconv.Itoa(i), f.m.fence, f.javaQueue, f.m.channel, time.Minute, owners[holder], pub, time.Second, false, false, 0, 0)
				if err != nil || res != 2 {
					b.Fatalf("release: %+v, %v", res, err)
				}
				t1 := time.Now()
				if got := acquire(owners[head]); got.Status != 1 {
					b.Fatalf("head %d not granted: %+v", head, got)
				}
				t2 := time.Now()
				if got := acquire(owners[holder]); got.Status != 0 {
					b.Fatalf("old holder not queued: %+v", got)
				}
				rel, acq, enq = rel+t1.Sub(t0), acq+t2.Sub(t1), enq+time.Since(t2)
				holder, head = head, (head+1)%(n+1)
			}
			b.StopTimer()
			done()
			b.ReportMetric(float64(acq.Microseconds())/float64(b.N), "acquire-us")
			b.ReportMetric(float64(rel.Microseconds())/float64(b.N), "release-us")
			b.ReportMetric(float64(enq.Microseconds())/float64(b.N), "enqueue-us")
			if got := queueLen(b, node, f); got != int64(n) {
				b.Fatalf("queue length %d after the run, want %d", got, n)
			}
		})
	}
}

// BenchmarkFairMutexContended: 32 waiters, each on its own Client, take turns
// on one fair lock holding it 1 ms. Reports acquisitions/s, wait percentiles
// (target p99 <= 32 x (hold + 1 ms) = 64 ms) and each waiter's share of the
// acquisitions: min and max as a percentage of the mean.
func BenchmarkFairMutexContended(b *testing.B) {
	node := redistest.Server(b)
	const waiters = 32
	prefix := sharedPrefix(b)
	holders := make([]holder, waiters)
	for i := range holders {
		holders[i] = lockHolder(mustFair(b, newTestClient(b, node.Client(b), prefix), "contended"))
	}
	contend(b, holders, time.Millisecond).report(b, "acq")
}
