package scriptlock

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// goroutine counts for the uncontended benchmarks: RunParallel starts
// parallelism × GOMAXPROCS goroutines.
var benchGoroutines = []int{1, 16, 64}

func runParallelN(b *testing.B, goroutines int, body func(pb func() bool, id int)) {
	if goroutines == 1 {
		i := 0
		body(func() bool { i++; return i <= b.N }, 0)
		return
	}
	b.SetParallelism(max(goroutines/runtime.GOMAXPROCS(0), 1))
	var ids atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		body(pb.Next, int(ids.Add(1)))
	})
}

// BenchmarkMutexUncontended: Lock+Unlock on distinct names.
func BenchmarkMutexUncontended(b *testing.B) {
	node := redistest.Server(b)
	rc := node.Client(b)
	c := newTestClient(b, rc)
	ctx := context.Background()
	for _, g := range benchGoroutines {
		b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) {
			b.ReportAllocs()
			defer reportServerTime(b, node)()
			runParallelN(b, g, func(next func() bool, id int) {
				m := mustMutex(b, c, "bench:"+strconv.Itoa(id))
				for next() {
					lctx, err := m.Lock(ctx)
					if err != nil {
						b.Error(err)
						return
					}
					if err := m.Unlock(lctx); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkSetNXBaseline is the bare minimum a lock can cost on the same
// client: SET NX PX, then a compare-and-delete script.
func BenchmarkSetNXBaseline(b *testing.B) {
	node := redistest.Server(b)
	rc := node.Client(b)
	del := rueidis.NewLuaScript(`if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`)
	ctx := context.Background()
	prefix := redistest.Prefix(b)
	for _, g := range benchGoroutines {
		b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) {
			b.ReportAllocs()
			defer reportServerTime(b, node)()
			runParallelN(b, g, func(next func() bool, id int) {
				key := prefix + "bench:" + strconv.Itoa(id)
				token := randomID()
				for next() {
					if err := rc.Do(ctx, rc.B().Set().Key(key).Value(token).Nx().PxMilliseconds(30000).Build()).Error(); err != nil {
						b.Error(err)
						return
					}
					if err := del.Exec(ctx, rc, []string{key}, []string{token}).Error(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkMutexContended: waiters, each on its own Client, take turns on one
// lock holding it 1 ms. Reports acquisitions/s, wait percentiles, the gap from
// a release to the next acquisition by a different waiter, and the spread of
// acquisitions among waiters.
func BenchmarkMutexContended(b *testing.B) {
	node := redistest.Server(b)
	for _, waiters := range []int{8, 32} {
		b.Run(fmt.Sprintf("waiters=%d", waiters), func(b *testing.B) {
			prefix := sharedPrefix(b)
			holders := make([]holder, waiters)
			for i := range holders {
				holders[i] = lockHolder(mustMutex(b, newTestClient(b, node.Client(b), prefix), "contended"))
			}
			contend(b, holders, time.Millisecond).report(b, "acq")
		})
	}
}

func reportPercentiles(b *testing.B, name string, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	at := func(p float64) float64 {
		return float64(ds[min(int(p*float64(len(ds))), len(ds)-1)].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), name+"-p50-ms")
	b.ReportMetric(at(0.99), name+"-p99-ms")
	b.ReportMetric(float64(ds[len(ds)-1].Microseconds())/1000, name+"-max-ms")
}

// BenchmarkWatchdog10k holds 10,000 locks on one Client for a few renewal
// intervals and reports goroutines, renewals per second, round trips per
// second and process CPU per second of holding.
func BenchmarkWatchdog10k(b *testing.B) {
	node := redistest.Server(b)
	c := newTestClient(b, node.Client(b), WithWatchdog(3*time.Second, time.Second))
	ctx := context.Background()
	const locks = 10000
	for i := 0; i < b.N; i++ {
		base := runtime.NumGoroutine()
		held := make([]context.Context, locks)
		ms := make([]*Mutex, locks)
		for j := range ms {
			ms[j] = mustMutex(b, c, "wd:"+strconv.Itoa(j))
			l, err := ms[j].Lock(ctx)
			if err != nil {
				b.Fatal(err)
			}
			held[j] = l
		}
		r0, bt0, cpu0 := c.wd.renewals.Load(), c.wd.batches.Load(), cpuTime()
		const hold = 4 * time.Second
		time.Sleep(hold)
		r1, bt1, cpu1 := c.wd.renewals.Load(), c.wd.batches.Load(), cpuTime()
		b.ReportMetric(float64(runtime.NumGoroutine()-base), "extra-goroutines")
		b.ReportMetric(float64(r1-r0)/hold.Seconds(), "renewals/s")
		b.ReportMetric(float64(bt1-bt0)/hold.Seconds(), "roundtrips/s")
		b.ReportMetric(float64((cpu1-cpu0).Milliseconds())/hold.Seconds(), "cpu-ms/s")
		for j, m := range ms {
			if held[j].Err() != nil {
				b.Fatalf("lock %d lost while held", j)
			}
			if err := m.Unlock(held[j]); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportServerTime reports the Redis server's own time per operation (from
// INFO commandstats) and the commands it ran per operation: the cost a lock
// puts on the shared server, apart from the network.
func reportServerTime(b *testing.B, node *redistest.Node) func() {
	usec0, calls0 := commandStats(b, node)
	return func() {
		usec1, calls1 := commandStats(b, node)
		b.ReportMetric(float64(usec1-usec0)/float64(b.N), "server-us/op")
		b.ReportMetric(float64(calls1-calls0-1)/float64(b.N), "cmds/op")
	}
}

func commandStats(b *testing.B, node *redistest.Node) (usec, calls int64) {
	info, err := node.Do(b, "INFO", "commandstats").ToString()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if !strings.HasPrefix(line, "cmdstat_") || strings.HasPrefix(line, "cmdstat_info:") {
			continue
		}
		for _, kv := range strings.Split(strings.TrimSpace(line[strings.IndexByte(line, ':')+1:]), ",") {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "usec":
				usec += n
			case "calls":
				calls += n
			}
		}
	}
	return usec, calls
}
