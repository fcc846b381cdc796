package bench

import (
	"context"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	goredislib "github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// lockLib is one library under test: newLocker returns, for one simulated
// process (its own connection), a function that takes the named lock and
// returns its release.
type lockLib struct {
	name      string
	newLocker func(b *testing.B, addr, prefix string) func(ctx context.Context, name string) (release func(), err error)
}

var libs = []lockLib{
	{"scriptlock", func(b *testing.B, addr, prefix string) func(context.Context, string) (func(), error) {
		rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true})
		if err != nil {
			b.Fatal(err)
		}
		c, err := scriptlock.New(rc, scriptlock.WithKeyPrefix(prefix))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close(); rc.Close() })
		return func(ctx context.Context, name string) (func(), error) {
			m := c.Mutex(name)
			lctx, err := m.Lock(ctx)
			if err != nil {
				return nil, err
			}
			return func() { _ = m.Unlock(lctx) }, nil
		}
	}},
	{"rueidislock", func(b *testing.B, addr, prefix string) func(context.Context, string) (func(), error) {
		l, err := rueidislock.NewLocker(rueidislock.LockerOption{
			ClientOption:   rueidis.ClientOption{InitAddress: []string{addr}},
			KeyPrefix:      prefix + "rueidislock",
			KeyMajority:    1,
			NoLoopTracking: true,
		})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(l.Close)
		return func(ctx context.Context, name string) (func(), error) {
			_, cancel, err := l.WithContext(ctx, name)
			if err != nil {
				return nil, err
			}
			return cancel, nil
		}
	}},
	{"redsync", func(b *testing.B, addr, prefix string) func(context.Context, string) (func(), error) {
		client := goredislib.NewClient(&goredislib.Options{Addr: addr, PoolSize: 128})
		b.Cleanup(func() { client.Close() })
		rs := redsync.New(goredis.NewPool(client))
		return func(ctx context.Context, name string) (func(), error) {
			m := rs.NewMutex(prefix+name, redsync.WithExpiry(30*time.Second), redsync.WithTries(1<<20))
			if err := m.LockContext(ctx); err != nil {
				return nil, err
			}
			return func() { _, _ = m.UnlockContext(ctx) }, nil
		}
	}},
	{"bsm-redislock", func(b *testing.B, addr, prefix string) func(context.Context, string) (func(), error) {
		client := goredislib.NewClient(&goredislib.Options{Addr: addr, PoolSize: 128})
		b.Cleanup(func() { client.Close() })
		locker := redislock.New(client)
		opts := &redislock.Options{RetryStrategy: redislock.LinearBackoff(10 * time.Millisecond)}
		return func(ctx context.Context, name string) (func(), error) {
			l, err := locker.Obtain(ctx, prefix+name, 30*time.Second, opts)
			if err != nil {
				return nil, err
			}
			return func() { _ = l.Release(ctx) }, nil
		}
	}},
}

// BenchmarkUncontended: Lock+Unlock on distinct names from 16 goroutines
// sharing one client.
func BenchmarkUncontended(b *testing.B) {
	node := redistest.Server(b)
	for _, lib := range libs {
		b.Run(lib.name, func(b *testing.B) {
			lock := lib.newLocker(b, node.Addr, redistest.Prefix(b))
			ctx := context.Background()
			var ids atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(max(16/runtime.GOMAXPROCS(0), 1))
			b.RunParallel(func(pb *testing.PB) {
				name := "u" + strconv.FormatInt(ids.Add(1), 10)
				for pb.Next() {
					release, err := lock(ctx, name)
					if err != nil {
						b.Error(err)
						return
					}
					release()
				}
			})
		})
	}
}

// BenchmarkContended: 8 waiters, each its own client (process), take turns
// holding one lock for 1 ms. Reports acquisitions/s, wait p50/p99, the gap
// from a release to the next acquisition by a different waiter, and the
// fewest acquisitions any waiter got.
func BenchmarkContended(b *testing.B) {
	node := redistest.Server(b)
	const waiters = 8
	for _, lib := range libs {
		b.Run(lib.name, func(b *testing.B) {
			prefix := redistest.Prefix(b)
			locks := make([]func(context.Context, string) (func(), error), waiters)
			for i := range locks {
				locks[i] = lib.newLocker(b, node.Addr, prefix)
			}
			ctx := context.Background()
			var (
				mu        sync.Mutex
				waits     []time.Duration
				gaps      []time.Duration
				lastOwner = -1
				lastFree  time.Time
				counts    = make([]int, waiters)
				remaining atomic.Int64
				wg        sync.WaitGroup
			)
			remaining.Store(int64(b.N))
			b.ResetTimer()
			start := time.Now()
			for i := range locks {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for remaining.Add(-1) >= 0 {
						t0 := time.Now()
						release, err := locks[i](ctx, "contended")
						if err != nil {
							b.Error(err)
							return
						}
						got := time.Now()
						mu.Lock()
						waits = append(waits, got.Sub(t0))
						if lastOwner >= 0 && lastOwner != i {
							gaps = append(gaps, got.Sub(lastFree))
						}
						counts[i]++
						mu.Unlock()
						time.Sleep(time.Millisecond)
						mu.Lock()
						lastOwner = i
						lastFree = time.Now()
						mu.Unlock()
						release()
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "acq/s")
			report(b, "wait", waits)
			report(b, "handoff", gaps)
			b.ReportMetric(float64(slices.Min(counts)), "min-acq/waiter")
		})
	}
}

func report(b *testing.B, name string, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	at := func(p float64) float64 {
		return float64(ds[min(int(p*float64(len(ds))), len(ds)-1)].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), name+"-p50-ms")
	b.ReportMetric(at(0.99), name+"-p99-ms")
}
