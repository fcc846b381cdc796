package scriptlock

import (
	"context"
	"testing"
	"time"
)

// A wait leaving its line (a Mutex's waiter set, a FairMutex's queue, an
// RWMutex's pending writers), bounded by the release timeout, goes out on
// the Client's connection just before a renewal, on a link whose round
// trip (3.1 s) is longer than that bound (1 s here) and well within half
// the lease (8 s), as in TestWatchdogRenewalBesideUndoOnSlowLink: with the
// bound a deadline rueidis sees, the connection closed when it passed,
// failing the renewal queued behind it, and the hold was lost. The leave
// still ends at its bound (within a 1.5 s margin).
func TestWatchdogRenewalBesideLeaveOnSlowLink(t *testing.T) {
	t.Parallel()
	sub := waitingSubtests(t)
	defer sub.Wait()
	const lease, oneWay, watch, bound = 8 * time.Second, 1550 * time.Millisecond, 11 * time.Second, time.Second
	for _, tc := range []struct {
		name  string
		leave func(c *Client)
	}{
		{"Mutex", func(c *Client) { mustMutex(t, c, "other").abandon(context.Background(), "gone", 0, 0) }},
		{"FairMutex", func(c *Client) { mustFair(t, c, "other").abandon(context.Background(), "gone", time.Second, 0) }},
		{"RWMutex", func(c *Client) { mustRW(t, c, "other").withdraw(context.Background(), "gone", 0) }},
	} {
		sub.Run(tc.name, func(t *testing.T) {
			p := newProxied(t, WithWatchdog(lease, 0), WithReleaseTimeout(bound))
			l := mustMutex(t, p.c, "l")
			warm(t, l)
			tc.leave(p.c) // the leave's scripts
			left := besideFirstRenewal(t, p.c, func() { tc.leave(p.c) })
			p.px.Delay(oneWay)
			lctx, err := l.Lock(testCtx(t, 30*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			keptFor(t, p.c, lctx, watch, 2)
			if took := left(); took > bound+1500*time.Millisecond {
				t.Fatalf("the leave took %v, past its bound %v", took.Round(time.Millisecond), bound)
			}
		})
	}
}
