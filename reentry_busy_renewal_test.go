package scriptlock

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A hold the watchdog renews while goroutines sharing its owner re-enter and
// unlock it without pause: each of those calls sets at least the watchdog's
// lease on the server, so a renewal beside them confirms the lease as much
// as one alone. The hold lasts; its renewals were all taken as possibly
// overtaken by those calls and never moved its loss deadline on.
func TestWatchdogHoldBusyWithReentries(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), WithWatchdog(2*time.Second, 0))
	for _, name := range []string{"mutex", "fair", "write"} {
		t.Run(name, func(t *testing.T) {
			var l Locker
			switch name {
			case "mutex":
				l = mustMutex(t, c, "busy-"+name)
			case "fair":
				l = mustFair(t, c, "busy-"+name)
			default:
				l = mustRW(t, c, "busy-"+name)
			}
			leased := l.(interface {
				LockWithLease(context.Context, time.Duration) (context.Context, error)
			})
			octx := WithOwner(testCtx(t, 30*time.Second), "job-"+name)
			outer, err := l.Lock(octx)
			if err != nil {
				t.Fatal(err)
			}
			churnOwner(octx, outer, l.Lock, leased.LockWithLease, l.Unlock)
			if err := context.Cause(outer); err != nil {
				t.Errorf("the watchdog hold ended while its owner re-entered it: %v", err)
			}
			_ = l.Unlock(outer)
		})
	}
}

// churnOwner re-enters a hold and unlocks it from six goroutines sharing its
// owner (octx), half of them with a lease, without pause for two and a half
// watchdog leases of two seconds (a loaded machine may delay one renewal by
// most of a second), or until outer (the hold's context) ends.
func churnOwner(octx, outer context.Context, lock func(context.Context) (context.Context, error),
	lockWithLease func(context.Context, time.Duration) (context.Context, error), unlock func(context.Context) error) {
	stop := time.Now().Add(5 * time.Second)
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) && outer.Err() == nil {
				var in context.Context
				var err error
				if i%2 == 0 {
					in, err = lockWithLease(octx, 2*time.Second)
				} else {
					in, err = lock(octx)
				}
				if err != nil {
					return
				}
				_ = unlock(in)
			}
		}()
	}
	wg.Wait()
}
