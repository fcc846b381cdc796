package scriptlock

import (
	"sync"
	"testing"
	"time"
)

// An undo in the background (of an acquisition of unknown outcome) goes out
// on the Client's connection just before a renewal, on a link whose round
// trip (3.1 s, internal/netproxy's Delay) is longer than the undo's bound
// (the release timeout, 1 s here; the default 5 s on a link slower than that
// alike) and well within half the lease (8 s). rueidis sends a call on a
// connection with no other in flight at once and queues the calls that come
// meanwhile behind it, and a deadline that ends such a call closes the
// connection: with the undo's bound a deadline, the renewal queued behind it
// failed with it, and so did the one made again behind the undo's next
// attempt, until the hold's loss deadline passed. The hook's pause puts the
// undo first, as a loaded machine may. Margin: each reply comes 1.3 s before
// the deadline.
func TestWatchdogRenewalBesideUndoOnSlowLink(t *testing.T) {
	t.Parallel()
	sub := waitingSubtests(t)
	defer sub.Wait()
	const lease, oneWay, watch = 8 * time.Second, 1550 * time.Millisecond, 11 * time.Second
	for _, tc := range []struct {
		name string
		undo func(c *Client, other *Mutex)
	}{
		// undoLater: an acquisition of unknown outcome nobody waits for.
		{"Later", func(c *Client, other *Mutex) { c.undoLater(other, "gone", lease, time.Now().Add(lease), 0) }},
		// undoNow: one the guard found unreplicated, or a grant come too late.
		{"Now", func(c *Client, other *Mutex) { _ = c.undoNow(other, "gone", lease) }},
		// A Semaphore's and a PermitSemaphore's give-back at once (permits
		// granted after Close began, or found unreplicated).
		{"SemaphoreNow", func(c *Client, _ *Mutex) {
			if s, err := c.Semaphore("sem"); err == nil {
				_ = s.undo("gone", 1, time.Second)
			}
		}},
		{"PermitsNow", func(c *Client, _ *Mutex) {
			if s, err := c.PermitSemaphore("permits"); err == nil {
				_ = s.undoNow([]byte("gone"), "gone")
			}
		}},
	} {
		sub.Run(tc.name, func(t *testing.T) {
			p := newProxied(t, WithWatchdog(lease, 0), WithReleaseTimeout(time.Second))
			l := mustMutex(t, p.c, "l")
			other := mustMutex(t, p.c, "other")
			warm(t, l)     // the lock's scripts
			warm(t, other) // and the undo's
			besideFirstRenewal(t, p.c, func() { tc.undo(p.c, other) })
			p.px.Delay(oneWay)
			lctx, err := l.Lock(testCtx(t, 30*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			keptFor(t, p.c, lctx, watch, 2)
		})
	}
}

// besideFirstRenewal has call made on a goroutine of its own as c's
// watchdog sends its first renewal, the renewal held back 300 ms so that
// call goes out first, as a loaded machine may have it. The function it
// returns waits for call to return and says how long call took.
func besideFirstRenewal(t *testing.T, c *Client, call func()) (took func() time.Duration) {
	var once sync.Once
	var done sync.WaitGroup
	var d time.Duration
	t.Cleanup(done.Wait)
	c.wd.sendHook = func() {
		once.Do(func() {
			done.Add(1)
			go func() {
				defer done.Done()
				began := time.Now()
				call()
				d = time.Since(began)
			}()
			time.Sleep(300 * time.Millisecond)
		})
	}
	return func() time.Duration {
		done.Wait()
		return d
	}
}
