package scriptlock

import (
	"context"
	"testing"
	"time"
)

// A give-back bounded by the release timeout (a CountDown, an Unlock, either
// semaphore's Release, a PermitSemaphore's give-back in the background) goes out on the
// Client's connection just before a renewal, on a link whose round trip
// (3.1 s) is longer than that bound (1 s here) and well within half the
// lease (8 s), as in TestWatchdogRenewalBesideUndoOnSlowLink: with the bound
// a deadline rueidis sees, the connection closed when it passed, failing
// the renewal queued behind it, and the hold was lost. The give-back still
// ends at its bound (within a 1.5 s margin, under the 3.1 s a reply takes).
func TestWatchdogRenewalBesideReleaseOnSlowLink(t *testing.T) {
	t.Parallel()
	sub := waitingSubtests(t)
	defer sub.Wait()
	const lease, oneWay, watch, bound = 8 * time.Second, 1550 * time.Millisecond, 11 * time.Second, time.Second
	const id = "0123456789abcdef0123456789abcdef"
	var other *Mutex // the Unlock case's
	var otherCtx context.Context
	for _, tc := range []struct {
		name string
		warm func(t *testing.T, c *Client)
		give func(c *Client)
	}{
		{"CountDown", func(t *testing.T, c *Client) {
			l, err := c.CountDownLatch("latch")
			if err != nil {
				t.Fatal(err)
			}
			if err := l.CountDown(testCtx(t, 5*time.Second)); err != nil {
				t.Fatal(err)
			}
		}, func(c *Client) {
			if l, err := c.CountDownLatch("latch"); err == nil {
				_ = l.CountDown(context.Background())
			}
		}},
		{"PermitRelease", func(t *testing.T, c *Client) {
			s, err := c.PermitSemaphore("permits")
			if err != nil {
				t.Fatal(err)
			}
			_ = s.Release(testCtx(t, 5*time.Second), id) // an unknown permit: the script loaded
		}, func(c *Client) {
			if s, err := c.PermitSemaphore("permits"); err == nil {
				_ = s.Release(context.Background(), id)
			}
		}},
		{"SemaphoreRelease", func(t *testing.T, c *Client) {
			s, err := c.Semaphore("sem")
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Release(testCtx(t, 5*time.Second), 1); err != nil { // the script loaded
				t.Fatal(err)
			}
		}, func(c *Client) {
			if s, err := c.Semaphore("sem"); err == nil {
				_ = s.Release(context.Background(), 1)
			}
		}},
		// An Unlock of a hold with a lease of its own (not renewed).
		{"Unlock", func(t *testing.T, c *Client) {
			other = mustMutex(t, c, "other")
			lctx, err := other.Lock(testCtx(t, 5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if err := other.Unlock(lctx); err != nil { // the scripts loaded
				t.Fatal(err)
			}
			if otherCtx, err = other.LockWithLease(testCtx(t, 5*time.Second), time.Minute); err != nil {
				t.Fatal(err)
			}
		}, func(c *Client) {
			_ = other.Unlock(otherCtx)
		}},
		// A permit given back in the background (an acquisition come too
		// late, or one a wait gave up on).
		{"PermitsUndo", func(t *testing.T, c *Client) {
			s, err := c.PermitSemaphore("permits")
			if err != nil {
				t.Fatal(err)
			}
			_ = s.Release(testCtx(t, 5*time.Second), id)
		}, func(c *Client) {
			if s, err := c.PermitSemaphore("permits"); err == nil {
				wire, _ := permitWire(id)
				s.undo(wire)
			}
		}},
	} {
		sub.Run(tc.name, func(t *testing.T) {
			p := newProxied(t, WithWatchdog(lease, 0), WithReleaseTimeout(bound))
			l := mustMutex(t, p.c, "l")
			warm(t, l)
			tc.warm(t, p.c)
			given := besideFirstRenewal(t, p.c, func() { tc.give(p.c) })
			p.px.Delay(oneWay)
			lctx, err := l.Lock(testCtx(t, 30*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			keptFor(t, p.c, lctx, watch, 2)
			if took := given(); took > bound+1500*time.Millisecond {
				t.Fatalf("the give-back took %v, past its bound %v", took.Round(time.Millisecond), bound)
			}
		})
	}
}
