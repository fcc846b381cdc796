package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A hold the watchdog renews over round trips (2.9 s, the hook's sleep
// before each renewal is sent) longer than the renewal interval (2.6 s) but
// within half the lease (8 s), every kind of lock, with and without the
// failover guard. Each renewal's lease counts from when it was sent (the
// first one's, from when the grant was sent), so the next renewal is due an
// interval after that: at once here, as its reply comes. Scheduled from the
// reply instead, the next reply came two round trips and an interval after
// the renewal before was sent, past the loss deadline that renewal set. And
// the renewal due at once is taken only once the reply before has moved the
// hold's loss deadline (the other hook holds that up): taken before, it was
// cut off at the deadline before, and the hold was lost though the server
// renewed it. Margin: each reply comes 1.9 s before the deadline.
func TestWatchdogRenewsOnSlowLink(t *testing.T) {
	t.Parallel()
	sub := waitingSubtests(t)
	defer sub.Wait()
	const lease, every, trip, watch = 8 * time.Second, 2600 * time.Millisecond, 2900 * time.Millisecond, 13 * time.Second
	for _, guarded := range []bool{false, true} {
		for _, lc := range lockCases {
			name := lc.name
			if guarded {
				name += "Guarded"
			}
			sub.Run(name, func(t *testing.T) {
				var node *redistest.Node
				opts := []Option{WithWatchdog(lease, every)}
				if guarded {
					node, _ = redistest.Replicated(t)
					opts = append(opts, WithFailoverGuard(true, 2*time.Second))
				} else {
					node = redistest.Server(t)
				}
				c := newTestClient(t, node.Client(t), opts...)
				c.wd.sendHook = func() { time.Sleep(trip) }
				c.wd.renewedHook = func() { time.Sleep(100 * time.Millisecond) }
				l := lc.make(t, c, "l")
				lctx, err := l.Lock(testCtx(t, 30*time.Second))
				if err != nil {
					t.Fatal(err)
				}
				held, renewals := time.Now(), c.wd.renewals.Load()
				select {
				case <-lctx.Done():
					t.Fatalf("the hold ended %v after its grant came back, after %d confirmed renewals: %v",
						time.Since(held).Round(time.Millisecond), c.wd.renewals.Load()-renewals, context.Cause(lctx))
				case <-time.After(watch):
				}
				// One every round trip after the first interval: 3 in 13 s.
				if n := c.wd.renewals.Load() - renewals; n < 2 {
					t.Fatalf("%d renewals confirmed in %v", n, watch)
				}
			})
		}
	}
}

// The first renewal of each kind of lock on a link whose round trip (3.1 s,
// internal/netproxy's Delay) is well within half the lease (8 s) keeps the
// hold: the server has not run the renewal's script yet, and an EVALSHA
// answered NOSCRIPT and sent again as EVAL took two round trips, its reply
// coming three round trips (9.3 s) after the grant was sent, past the loss
// deadline the grant set (7.8 s). Margin: each reply comes 1.6 s before
// the deadline.
func TestWatchdogFirstRenewalOnSlowLink(t *testing.T) {
	t.Parallel()
	sub := waitingSubtests(t)
	defer sub.Wait()
	const lease, oneWay, watch = 8 * time.Second, 1550 * time.Millisecond, 11 * time.Second
	for _, lc := range lockCases {
		sub.Run(lc.name, func(t *testing.T) {
			p := newProxied(t, WithWatchdog(lease, 0))
			l := lc.make(t, p.c, "l")
			warm(t, l) // the lock's scripts, not the renewal's
			p.px.Delay(oneWay)
			lctx, err := l.Lock(testCtx(t, 30*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			held, renewals := time.Now(), p.c.wd.renewals.Load()
			select {
			case <-lctx.Done():
				t.Fatalf("the hold ended %v after its grant came back, after %d confirmed renewals: %v",
					time.Since(held).Round(time.Millisecond), p.c.wd.renewals.Load()-renewals, context.Cause(lctx))
			case <-time.After(watch):
			}
			if n := p.c.wd.renewals.Load() - renewals; n < 2 {
				t.Fatalf("%d renewals confirmed in %v", n, watch)
			}
		})
	}
}
