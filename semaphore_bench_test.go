package scriptlock

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Benchmarks for Semaphore, PermitSemaphore, CountDownLatch, MultiLock and
// RedLock: one uncontended round trip each, plus hand-off under contention.

func BenchmarkSemaphoreUncontended(b *testing.B) {
	node := redistest.Server(b)
	c := newTestClient(b, node.Client(b))
	ctx := context.Background()
	s := mustSem(b, c, "bench")
	if _, err := s.TrySetPermits(ctx, 1); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Acquire(ctx, 1); err != nil {
			b.Fatal(err)
		}
		if err := s.Release(ctx, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSemaphoreHandoff: one permit, 8 waiters each on its own Client;
// every op is one acquisition that had to wait for a release elsewhere.
// Reports hand-offs/s and the median and p99 wait.
func BenchmarkSemaphoreHandoff(b *testing.B) {
	node := redistest.Server(b)
	const waiters = 8
	prefix := sharedPrefix(b)
	ctx := context.Background()
	if _, err := mustSem(b, newTestClient(b, node.Client(b), prefix), "one").TrySetPermits(ctx, 1); err != nil {
		b.Fatal(err)
	}
	holders := make([]holder, waiters)
	for i := range holders {
		s := mustSem(b, newTestClient(b, node.Client(b), prefix), "one")
		holders[i] = func(ctx context.Context) (func() error, error) {
			if err := s.Acquire(ctx, 1); err != nil {
				return nil, err
			}
			return func() error { return s.Release(ctx, 1) }, nil
		}
	}
	contend(b, holders, 0).report(b, "handoffs")
}

// BenchmarkSemaphoreHandoffOneClient: one permit, 16 goroutines of one
// Client taking turns on it, as a worker pool in one process would. Reports
// the server commands per hand-off: a release that woke every local waiter
// cost one refused attempt per waiter.
func BenchmarkSemaphoreHandoffOneClient(b *testing.B) {
	node := redistest.Server(b)
	const waiters = 16
	ctx := context.Background()
	s := mustSem(b, newTestClient(b, node.Client(b)), "one")
	if _, err := s.TrySetPermits(ctx, 1); err != nil {
		b.Fatal(err)
	}
	holders := make([]holder, waiters)
	for i := range holders {
		holders[i] = func(ctx context.Context) (func() error, error) {
			if err := s.Acquire(ctx, 1); err != nil {
				return nil, err
			}
			return func() error { return s.Release(ctx, 1) }, nil
		}
	}
	defer reportServerTime(b, node)()
	contend(b, holders, 0).report(b, "handoffs")
}

func BenchmarkPermitSemaphoreUncontended(b *testing.B) {
	node := redistest.Server(b)
	c := newTestClient(b, node.Client(b))
	ctx := context.Background()
	s := mustPermits(b, c, "bench")
	if _, err := s.TrySetPermits(ctx, 1); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		id, err := s.Acquire(ctx, 10*time.Second)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Release(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPermitSemaphoreHandoff: one permit, 8 holders on their own
// Clients, as BenchmarkSemaphoreHandoff.
func BenchmarkPermitSemaphoreHandoff(b *testing.B) {
	node := redistest.Server(b)
	const waiters = 8
	prefix := sharedPrefix(b)
	ctx := context.Background()
	if _, err := mustPermits(b, newTestClient(b, node.Client(b), prefix), "one").TrySetPermits(ctx, 1); err != nil {
		b.Fatal(err)
	}
	holders := make([]holder, waiters)
	for i := range holders {
		s := mustPermits(b, newTestClient(b, node.Client(b), prefix), "one")
		holders[i] = func(ctx context.Context) (func() error, error) {
			id, err := s.Acquire(ctx, 10*time.Second)
			if err != nil {
				return nil, err
			}
			return func() error { return s.Release(ctx, id) }, nil
		}
	}
	contend(b, holders, 0).report(b, "handoffs")
}

// BenchmarkLatchUncontended: TrySetCount(1), CountDown, Await.
func BenchmarkLatchUncontended(b *testing.B) {
	node := redistest.Server(b)
	c := newTestClient(b, node.Client(b))
	ctx := context.Background()
	l := mustLatch(b, c, "bench")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.TrySetCount(ctx, 1); err != nil {
			b.Fatal(err)
		}
		if err := l.CountDown(ctx); err != nil {
			b.Fatal(err)
		}
		if err := l.Await(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLatchRelease: 8 waiters on their own Clients await a latch; each
// op counts it down to zero and waits until all 8 are released. Reports the
// time from the last CountDown to the last waiter's return.
func BenchmarkLatchRelease(b *testing.B) {
	node := redistest.Server(b)
	const waiters = 8
	prefix := sharedPrefix(b)
	ctx := context.Background()
	setter := newTestClient(b, node.Client(b), prefix)
	latches := make([]*CountDownLatch, waiters)
	for i := range latches {
		latches[i] = mustLatch(b, newTestClient(b, node.Client(b), prefix), "l")
	}
	var total time.Duration
	for i := 0; b.Loop(); i++ {
		l := mustLatch(b, setter, "l")
		if _, err := l.TrySetCount(ctx, 1); err != nil {
			b.Fatal(err)
		}
		var ready, done sync.WaitGroup
		for _, w := range latches {
			ready.Add(1)
			done.Add(1)
			go func() {
				defer done.Done()
				ready.Done()
				if err := w.Await(ctx); err != nil {
					b.Error(err)
				}
			}()
		}
		ready.Wait()
		time.Sleep(2 * time.Millisecond) // let the waiters subscribe
		t0 := time.Now()
		if err := l.CountDown(ctx); err != nil {
			b.Fatal(err)
		}
		done.Wait()
		total += time.Since(t0)
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "release-all-µs")
}

// BenchmarkMultiLock3: Lock+Unlock of a MultiLock over three Mutexes.
func BenchmarkMultiLock3(b *testing.B) {
	node := redistest.Server(b)
	c := newTestClient(b, node.Client(b))
	ctx := context.Background()
	var ls []Locker
	for i := range 3 {
		ls = append(ls, mustMutex(b, c, "m"+strconv.Itoa(i)))
	}
	ml := mustMulti(b, ls)
	b.ReportAllocs()
	for b.Loop() {
		lctx, err := ml.Lock(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := ml.Unlock(lctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMultiLockOppositeOrder: two Clients take MultiLocks over {a,b}
// and {b,a} in turn; ops are acquisitions by either.
func BenchmarkMultiLockOppositeOrder(b *testing.B) {
	node := redistest.Server(b)
	prefix := sharedPrefix(b)
	ctx := context.Background()
	c1 := newTestClient(b, node.Client(b), prefix)
	c2 := newTestClient(b, node.Client(b), prefix)
	mls := []*MultiLock{
		mustMulti(b, []Locker{mustMutex(b, c1, "a"), mustMutex(b, c1, "b")}),
		mustMulti(b, []Locker{mustMutex(b, c2, "b"), mustMutex(b, c2, "a")}),
	}
	var left atomic.Int64
	left.Store(int64(b.N))
	b.ResetTimer()
	var wg sync.WaitGroup
	for _, ml := range mls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				lctx, err := ml.Lock(ctx)
				if err != nil {
					b.Error(err)
					return
				}
				if err := ml.Unlock(lctx); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkRedLock5: Lock+Unlock over five independent nodes.
func BenchmarkRedLock5(b *testing.B) {
	nodes := redistest.Servers(b, 5)
	prefix := sharedPrefix(b)
	cs := make([]*Client, len(nodes))
	for i, n := range nodes {
		cs[i] = newTestClient(b, n.Client(b), prefix)
	}
	r := mustRedLock(b, "bench", cs)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		lctx, err := r.Lock(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := r.Unlock(lctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRedLock5Contended: 4 owners, each on its own set of 5 Clients,
// take turns; ops are acquisitions.
func BenchmarkRedLock5Contended(b *testing.B) {
	nodes := redistest.Servers(b, 5)
	prefix := sharedPrefix(b)
	const owners = 4
	holders := make([]holder, owners)
	for o := range holders {
		cs := make([]*Client, len(nodes))
		for i, n := range nodes {
			cs[i] = newTestClient(b, n.Client(b), prefix)
		}
		holders[o] = lockHolder(mustRedLock(b, "bench", cs))
	}
	contend(b, holders, 0).report(b, "handoffs")
}
