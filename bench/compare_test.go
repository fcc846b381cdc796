package bench

import (
	"context"
	"flag"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

var rotate = flag.Int("rotate", 0, "run the libraries in an order rotated by this many places, so repeated rounds do not always favour the same position")

// runTimeout bounds one benchmark run (a few seconds at -benchtime 1s), so a
// library that never grants a lock fails its run instead of hanging the rest.
const runTimeout = 20 * time.Second

// rotated returns libs rotated by -rotate places.
func rotated() []lockLib {
	r := ((*rotate % len(libs)) + len(libs)) % len(libs)
	return append(slices.Clone(libs[r:]), libs[:r]...)
}

// BenchmarkUncontended: Lock+Unlock from G goroutines sharing one client
// (one process), each goroutine on its own lock name, so no call ever waits.
// One op is one Lock+Unlock pair.
func BenchmarkUncontended(b *testing.B) {
	node := benchServer(b)
	for _, g := range []int{16, 64} {
		b.Run("goroutines="+strconv.Itoa(g), func(b *testing.B) {
			for _, lib := range rotated() {
				b.Run("lib="+lib.name, func(b *testing.B) {
					ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
					defer cancel()
					probe := newProbe(b, node.Addr)
					lock := lib.open(b, node.Addr, redistest.Prefix(b))
					names := make([]string, g)
					for i := range names {
						names[i] = "u" + strconv.Itoa(i)
						lockOnce(ctx, b, lock, names[i]) // connections open, scripts loaded
					}
					b.ReportAllocs()
					m := startMeter(b, probe)
					var (
						remaining atomic.Int64
						wg        sync.WaitGroup
					)
					remaining.Store(int64(b.N))
					b.ResetTimer()
					start := time.Now()
					for _, name := range names {
						wg.Go(func() {
							for remaining.Add(-1) >= 0 {
								if !lockOnce(ctx, b, lock, name) {
									return
								}
							}
						})
					}
					wg.Wait()
					elapsed := time.Since(start)
					b.StopTimer()
					m.stop(b).report(b, b.N)
					b.ReportMetric(float64(b.N)/elapsed.Seconds(), "ops/s")
				})
			}
		})
	}
}

// lockOnce takes and releases name, failing the benchmark on an error.
func lockOnce(ctx context.Context, b *testing.B, lock locker, name string) bool {
	release, err := lock(ctx, name)
	if err != nil {
		b.Error(err)
		return false
	}
	if err := release(); err != nil {
		b.Error(err)
		return false
	}
	return true
}

// BenchmarkContended: 32 waiters, each with its own client as separate
// processes would have, take turns holding one lock for 1 ms. One op is one
// acquisition (with its wait and its release). Reports acquisitions/s, wait
// p50/p99 (from calling Lock to holding), the hand-off gap from the start of
// a release to the next acquisition by another waiter, and the fewest
// acquisitions any waiter got (0 means a waiter starved).
func BenchmarkContended(b *testing.B) {
	node := benchServer(b)
	const waiters = 32
	b.Run("waiters="+strconv.Itoa(waiters), func(b *testing.B) {
		for _, lib := range rotated() {
			b.Run("lib="+lib.name, func(b *testing.B) {
				ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
				defer cancel()
				probe := newProbe(b, node.Addr)
				prefix := redistest.Prefix(b)
				locks := make([]locker, waiters)
				for i := range locks {
					locks[i] = lib.open(b, node.Addr, prefix)
					lockOnce(ctx, b, locks[i], "contended")
				}
				m := startMeter(b, probe)
				r := contend(ctx, b, locks, "contended", time.Millisecond)
				m.stop(b).report(b, b.N)
				r.report(b)
			})
		}
	})
}

// contention is what one contended run measured.
type contention struct {
	waits   []time.Duration // from calling the locker to holding
	gaps    []time.Duration // from the start of a release to the next hold by another waiter
	counts  []int           // holds per waiter
	elapsed time.Duration
	ops     int
}

// contend runs b.N holds of name spread over the lockers, each in its own
// goroutine, every hold lasting hold. It brackets the timed region itself.
func contend(ctx context.Context, b *testing.B, locks []locker, name string, hold time.Duration) contention {
	r := contention{counts: make([]int, len(locks)), ops: b.N}
	var (
		mu        sync.Mutex
		lastOwner = -1
		lastFree  time.Time
		remaining atomic.Int64
		wg        sync.WaitGroup
	)
	remaining.Store(int64(b.N))
	b.ResetTimer()
	start := time.Now()
	for i, lock := range locks {
		wg.Go(func() {
			for remaining.Add(-1) >= 0 {
				t0 := time.Now()
				release, err := lock(ctx, name)
				if err != nil {
					b.Error(err)
					return
				}
				got := time.Now()
				mu.Lock()
				r.waits = append(r.waits, got.Sub(t0))
				if lastOwner >= 0 && lastOwner != i {
					r.gaps = append(r.gaps, got.Sub(lastFree))
				}
				r.counts[i]++
				mu.Unlock()
				time.Sleep(hold)
				mu.Lock()
				lastOwner, lastFree = i, time.Now()
				mu.Unlock()
				if err := release(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	r.elapsed = time.Since(start)
	b.StopTimer()
	return r
}

func (r contention) report(b *testing.B) {
	b.ReportMetric(float64(r.ops)/r.elapsed.Seconds(), "acq/s")
	reportPercentiles(b, "wait", r.waits)
	reportPercentiles(b, "handoff", r.gaps)
	b.ReportMetric(float64(slices.Min(r.counts)), "min-acq/waiter")
}

// reportPercentiles reports the 50th and 99th percentiles of ds in ms.
func reportPercentiles(b *testing.B, name string, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	b.ReportMetric(msAt(ds, 0.50), name+"-p50-ms")
	b.ReportMetric(msAt(ds, 0.99), name+"-p99-ms")
}

// msAt is the p-quantile of sorted ds (nearest rank), in milliseconds.
func msAt(ds []time.Duration, p float64) float64 {
	i := min(max(int(math.Ceil(p*float64(len(ds))))-1, 0), len(ds)-1)
	return float64(ds[i].Microseconds()) / 1000
}
