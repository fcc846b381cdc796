package scriptlock

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// slowLinkHold holds the lock lc makes through a Client reaching node over
// internal/netproxy, with the watchdog's lease and (guarded) the failover
// guard, once the lock's scripts are loaded and the link slowed to oneWay
// each way. hook, when set, runs after each round of confirmed renewals.
func slowLinkHold(t *testing.T, node *redistest.Node, lc lockCase, guarded bool, lease, oneWay time.Duration, hook func()) (*Client, context.Context) {
	t.Helper()
	px := netproxy.New(t, node.Addr)
	opts := []Option{WithWatchdog(lease, 0)}
	if guarded {
		opts = append(opts, WithFailoverGuard(true, 2*time.Second))
	}
	c := newTestClient(t, px.Client(t), opts...)
	l := lc.make(t, c, "l")
	warm(t, l) // the lock's scripts (and the replica count), not the renewal's
	c.wd.renewedHook = hook
	px.Delay(oneWay)
	lctx, err := l.Lock(testCtx(t, 30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return c, lctx
}

// keptFor fails t if lctx ends within watch, or fewer than want renewals
// of c are confirmed by then.
func keptFor(t *testing.T, c *Client, lctx context.Context, watch time.Duration, want int64) {
	t.Helper()
	held, renewals := time.Now(), c.wd.renewals.Load()
	select {
	case <-lctx.Done():
		t.Fatalf("the hold ended %v after it was watched, after %d confirmed renewals: %v",
			time.Since(held).Round(time.Millisecond), c.wd.renewals.Load()-renewals, context.Cause(lctx))
	case <-time.After(watch):
	}
	if n := c.wd.renewals.Load() - renewals; n < want {
		t.Fatalf("%d renewals confirmed in %v", n, watch)
	}
}

// The first renewal of each kind of lock under the failover guard (with
// WAIT, on a primary with a replica) on a link whose round trip (3.1 s,
// internal/netproxy's Delay) is well within half the lease (8 s) keeps the
// hold, as an unguarded one does (TestWatchdogFirstRenewalOnSlowLink): sent
// as EVALSHA, it was answered NOSCRIPT and sent again as EVAL with a WAIT of
// its own, its reply coming three round trips (9.3 s) after the grant was
// sent, past the loss deadline the grant set (7.8 s). Margin: each reply
// comes 1.6 s before the deadline.
func TestWatchdogFirstGuardedRenewalOnSlowLink(t *testing.T) {
	t.Parallel()
	sub := waitingSubtests(t)
	defer sub.Wait()
	const lease, oneWay, watch = 8 * time.Second, 1550 * time.Millisecond, 11 * time.Second
	for _, lc := range lockCases {
		sub.Run(lc.name, func(t *testing.T) {
			node, _ := redistest.Replicated(t)
			c, lctx := slowLinkHold(t, node, lc, true, lease, oneWay, nil)
			keptFor(t, c, lctx, watch, 2)
		})
	}
}

// A server that loses its scripts (SCRIPT FLUSH here; a restart or a
// failover to a replica behind the same address alike) under a hold the
// watchdog renews over a link whose round trip (3.1 s) is well within half
// the lease (8 s) keeps it, with and without the failover guard: the
// renewal after the flush, sent as EVALSHA because the server had answered
// one, was answered NOSCRIPT and sent again as EVAL, two round trips
// (6.2 s) from a send 3.1 s after the one before (the round trip is longer
// than the renewal interval), past the loss deadline that one set. On such
// a link a renewal goes as EVAL, which one round trip answers whatever the
// server has lost. Margin: each reply comes 1.6 s before the deadline.
func TestWatchdogRenewalAfterScriptFlushOnSlowLink(t *testing.T) {
	t.Parallel()
	sub := waitingSubtests(t)
	defer sub.Wait()
	const lease, oneWay, watch = 8 * time.Second, 1550 * time.Millisecond, 11 * time.Second
	for _, guarded := range []bool{false, true} {
		for _, lc := range lockCases {
			name := lc.name
			if guarded {
				name += "Guarded"
			}
			sub.Run(name, func(t *testing.T) {
				var node *redistest.Node
				if guarded {
					node, _ = redistest.Replicated(t)
				} else {
					node = redistest.Server(t)
				}
				direct := node.Client(t)
				var once sync.Once
				flushed := make(chan error, 1)
				// After the first renewal confirmed, so the server has
				// answered one of the hold's kind: the flush reaches it
				// (at once, not over the slow link) before the next one.
				c, lctx := slowLinkHold(t, node, lc, guarded, lease, oneWay, func() {
					once.Do(func() {
						flushed <- direct.Do(context.Background(), direct.B().ScriptFlush().Build()).Error()
					})
				})
				select {
				case err := <-flushed:
					if err != nil {
						t.Fatalf("SCRIPT FLUSH: %v", err)
					}
				case <-lctx.Done():
					t.Fatalf("the hold ended before its first renewal was confirmed: %v", context.Cause(lctx))
				case <-time.After(15 * time.Second):
					t.Fatal("no renewal confirmed in 15 s")
				}
				keptFor(t, c, lctx, watch, 2)
			})
		}
	}
}
