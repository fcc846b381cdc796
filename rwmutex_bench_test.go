package scriptlock

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// BenchmarkRWMutexUncontended: RLock+RUnlock and Lock+Unlock on distinct
// names.
func BenchmarkRWMutexUncontended(b *testing.B) {
	node := redistest.Server(b)
	c := newTestClient(b, node.Client(b))
	ctx := context.Background()
	for _, side := range []string{"read", "write"} {
		for _, g := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/goroutines=%d", side, g), func(b *testing.B) {
				b.ReportAllocs()
				done := reportServerTime(b, node)
				start := time.Now()
				runParallelN(b, g, func(next func() bool, id int) {
					var l Locker = mustRW(b, c, "bench:"+side+":"+strconv.Itoa(id))
					if side == "read" {
						l = l.(*RWMutex).RLocker()
					}
					for next() {
						lctx, err := l.Lock(ctx)
						if err != nil {
							b.Error(err)
							return
						}
						if err := l.Unlock(lctx); err != nil {
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
}

// BenchmarkRWMutexSharedReaders: 16 readers on 4 Clients read one lock at
// once (RLock+RUnlock): reads do not exclude each other.
func BenchmarkRWMutexSharedReaders(b *testing.B) {
	node := redistest.Server(b)
	prefix := sharedPrefix(b)
	clients := make([]*Client, 4)
	for i := range clients {
		clients[i] = newTestClient(b, node.Client(b), prefix)
	}
	ctx := context.Background()
	var remaining atomic.Int64
	remaining.Store(int64(b.N))
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rw := mustRW(b, clients[i%len(clients)], "shared")
			octx := WithOwner(ctx, "reader-"+strconv.Itoa(i))
			for remaining.Add(-1) >= 0 {
				l, err := rw.RLock(octx)
				if err != nil {
					b.Error(err)
					return
				}
				if err := rw.RUnlock(l); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "reads/s")
}

// BenchmarkRWMutexWriterHandoff: writers, each on its own Client, take turns
// on one RWMutex holding the write lock 1 ms; reports acquisitions/s and wait
// percentiles. With readers=8, eight more Clients read the lock in a loop
// (holding 1 ms) at the same time: the writers' waits show they are not
// starved.
func BenchmarkRWMutexWriterHandoff(b *testing.B) {
	node := redistest.Server(b)
	for _, readers := range []int{0, 8} {
		b.Run(fmt.Sprintf("writers=8/readers=%d", readers), func(b *testing.B) {
			prefix := sharedPrefix(b)
			ctx := context.Background()
			stop := make(chan struct{})
			var rwg sync.WaitGroup
			var reads atomic.Int64
			for i := 0; i < readers; i++ {
				rw := mustRW(b, newTestClient(b, node.Client(b), prefix), "handoff")
				rwg.Add(1)
				go func() {
					defer rwg.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						l, err := rw.RLock(ctx)
						if err != nil {
							b.Error(err)
							return
						}
						reads.Add(1)
						time.Sleep(time.Millisecond)
						_ = rw.RUnlock(l)
					}
				}()
			}
			holders := make([]holder, 8)
			for i := range holders {
				holders[i] = lockHolder(mustRW(b, newTestClient(b, node.Client(b), prefix), "handoff"))
			}
			r := contend(b, holders, time.Millisecond)
			close(stop)
			rwg.Wait()
			r.report(b, "writes")
			if readers > 0 {
				b.ReportMetric(float64(reads.Load())/r.elapsed.Seconds(), "reads/s")
			}
		})
	}
}
