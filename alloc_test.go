package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestUncontendedAllocs bounds the client's allocations per uncontended
// Lock+Unlock (and semaphore Acquire+Release) on a reused handle, rueidis's
// included: the hot path must not allocate on paths taken only on failure,
// such as the errors.As targets of retryLater. The race detector's runtime
// allocates on its own, so `make test` runs this test again without -race.
func TestUncontendedAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector; make test runs this test without it")
	}
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := context.Background()
	lockUnlock := func(l Locker) func() {
		return func() {
			lctx, err := l.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Unlock(lctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	try := mustMutex(t, c, "mutex-try")
	sem := mustSem(t, c, "permits")
	if _, err := sem.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		max  float64
		f    func()
	}{
		// Every lock context is made only when asked for (lockCtx.lazy).
		{"Mutex", 2, lockUnlock(mustMutex(t, c, "mutex"))},
		// An acquisition that sends MutexAcquire its lease or settings
		// (any but a default Lock's) costs no more than one that does not.
		{"Mutex with a lease", 2, lockUnlock(mustMutex(t, c, "mutex-lease", WithLease(10*time.Second)))},
		{"Mutex with a waiter timeout", 2, lockUnlock(mustMutex(t, c, "mutex-waiter", WithWaiterTimeout(7*time.Second)))},
		{"Mutex TryLock", 2, func() {
			lctx, err := try.TryLock(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := try.Unlock(lctx); err != nil {
				t.Fatal(err)
			}
		}},
		{"FairMutex", 2, lockUnlock(mustFair(t, c, "fair"))},
		{"LeanMutex", 2, lockUnlock(mustLean(t, c, "lean"))},
		{"RWMutex", 6, lockUnlock(mustRW(t, c, "rw"))},
		{"RWMutex read", 11, lockUnlock(mustRW(t, c, "rw-read").RLocker())},
		// Its Release is queued, with no deadline rueidis sees (which closed
		// the connection renewals share on a link slower than the release
		// timeout), and its retryable command pinned (keptWhole): 7 of them.
		{"Semaphore", 15, func() {
			if err := sem.Acquire(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if err := sem.Release(ctx, 1); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		tc.f() // connections open, scripts loaded
		// The least of three runs: on a loaded machine one run now and then
		// counts a few more (the scheduler, the runtime's own work), while a
		// path that allocates more does so in every run.
		got := testing.AllocsPerRun(500, tc.f)
		for range 2 {
			got = min(got, testing.AllocsPerRun(500, tc.f))
		}
		if got > tc.max {
			t.Errorf("%s: %v allocations per uncontended round, want at most %v", tc.name, got, tc.max)
		}
	}
}

// TestHandleAllocs bounds the allocations of making a lock handle, which
// programs often do per request: the key and the names derived from it
// share one allocation.
func TestHandleAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector; make test runs this test without it")
	}
	c := newTestClient(t, redistest.Server(t).Client(t))
	for _, tc := range []struct {
		name string
		max  float64
		f    func() error
	}{
		{"Mutex", 2, func() error { _, err := c.Mutex("mutex"); return err }},
		{"FairMutex", 2, func() error { _, err := c.FairMutex("fair"); return err }},
		{"RWMutex", 2, func() error { _, err := c.RWMutex("rw"); return err }},
		{"LeanMutex", 2, func() error { _, err := c.LeanMutex("lean"); return err }},
		{"LeanMutex fenced", 4, func() error { _, err := c.LeanMutex("lean", WithFencing()); return err }},
	} {
		got := testing.AllocsPerRun(200, func() {
			if err := tc.f(); err != nil {
				t.Fatal(err)
			}
		})
		if got > tc.max {
			t.Errorf("%s: %v allocations per handle, want at most %v", tc.name, got, tc.max)
		}
	}
}

// TestPerRequestMutexAllocs bounds the allocations of a Lock+Unlock on a
// Mutex handle made for it, as programs often do per request, when the lease
// is not the default (a Client's WithLease or WithWatchdog): the lease's text
// is formatted once per value, not once per handle.
func TestPerRequestMutexAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector; make test runs this test without it")
	}
	node := redistest.Server(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		opt  Option
	}{{"WithLease(10s)", WithLease(10 * time.Second)}, {"WithWatchdog(20s)", WithWatchdog(20*time.Second, 0)}} {
		c := newTestClient(t, node.Client(t), tc.opt)
		f := func() {
			m, err := c.Mutex("mutex")
			if err != nil {
				t.Fatal(err)
			}
			lctx, err := m.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Unlock(lctx); err != nil {
				t.Fatal(err)
			}
		}
		f() // connections open, scripts loaded
		// The least of three runs, as in TestUncontendedAllocs.
		got := testing.AllocsPerRun(300, f)
		for range 2 {
			got = min(got, testing.AllocsPerRun(300, f))
		}
		// The handle's two (TestHandleAllocs) and a reused handle's two.
		if got > 4 {
			t.Errorf("%s: %v allocations per Lock+Unlock on a new handle, want at most 4", tc.name, got)
		}
	}
}
