package scriptlock

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// holder takes a contended primitive once and returns how to give it back.
type holder func(ctx context.Context) (release func() error, err error)

// contention is what one contended benchmark run measured.
type contention struct {
	waits   []time.Duration // from calling the holder to holding
	gaps    []time.Duration // from the start of a release to the next hold by another holder
	counts  []int           // holds per holder
	elapsed time.Duration
}

// contend runs b.N holds spread over the holders, each in its own goroutine,
// every hold lasting hold. The hand-off gap runs from the start of a release:
// an upper bound that includes the release round trip.
func contend(b *testing.B, holders []holder, hold time.Duration) contention {
	ctx := context.Background()
	r := contention{counts: make([]int, len(holders))}
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
	for i, take := range holders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for remaining.Add(-1) >= 0 {
				t0 := time.Now()
				release, err := take(ctx)
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
		}()
	}
	wg.Wait()
	r.elapsed = time.Since(start)
	b.StopTimer()
	return r
}

// report reports holds per second, wait and hand-off percentiles, and the
// spread of holds among holders (counts and share of the mean).
func (r contention) report(b *testing.B, unit string) {
	b.ReportMetric(float64(b.N)/r.elapsed.Seconds(), unit+"/s")
	reportPercentiles(b, "wait", r.waits)
	reportPercentiles(b, "handoff", r.gaps)
	lo, hi := slices.Min(r.counts), slices.Max(r.counts)
	mean := float64(b.N) / float64(len(r.counts))
	b.ReportMetric(float64(lo), "min-acq/holder")
	b.ReportMetric(float64(hi), "max-acq/holder")
	b.ReportMetric(100*float64(lo)/mean, "min-share-%mean")
	b.ReportMetric(100*float64(hi)/mean, "max-share-%mean")
}

// lockHolder adapts a Locker to contend.
func lockHolder(l Locker) holder {
	return func(ctx context.Context) (func() error, error) {
		lctx, err := l.Lock(ctx)
		if err != nil {
			return nil, err
		}
		return func() error { return l.Unlock(lctx) }, nil
	}
}
