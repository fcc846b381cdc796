package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// notifyFallback bounds how long a waiter sleeps between attempts when no
// message arrives and the caller gave no fallback of its own. Waiters are
// woken by messages; this only covers a message lost while the subscription
// was being re-established.
const notifyFallback = 2 * time.Second

// errSubscribeUnanswered ends a wait (waitOn) that ran out while the server
// had not confirmed its subscription: the wait's owner reports it as a wait
// whose last attempt went unanswered (NotAcquiredError.Unanswered), never
// as this error.
var errSubscribeUnanswered = errors.New("the server did not confirm the wait's subscription before the wait ended")

// waitOverrun is how far past the end of a wait (TryLock's wait, TryAcquire's,
// AwaitTimeout's) an attempt may still run: every attempt of such a wait is
// cut off then, so a server that stopped answering cannot hold the caller
// past its wait by more than this (plus waitSpec.overrun). An attempt cut off
// is undone as any attempt of unknown outcome, and the wait reports that it
// ran out.
const waitOverrun = 100 * time.Millisecond

// waitNotified runs try until it succeeds, waiting between attempts for a
// message on channel (all: every local waiter on the channel is woken;
// otherwise the longest-waiting one, a lock hand-off), for the fallback
// try returned, or until wait (< 0: no limit) or ctx runs out. The first
// attempt is made before subscribing, and one more right after subscribing, so
// a message published in between is never missed (a targeted waiter whose
// subscription is already open joins it before the first attempt instead).
// It reports false when the wait ran out, with errSubscribeUnanswered when
// it ran out subscribing, the server's confirmation still awaited. try's
// calls are bounded by the context it is given (see attemptContext), not
// by ctx alone.
func (c *Client) waitNotified(ctx context.Context, channel string, all bool, wait time.Duration, try func(actx context.Context) (bool, time.Duration, error)) (bool, error) {
	return c.waitOn(ctx, waitSpec{channel: channel, all: all}, wait, func(actx context.Context, _ int64, _ bool) (bool, tryAgain, error) {
		ok, sleep, err := try(actx)
		return ok, tryAgain{sleep: sleep}, err
	})
}

// waitCounted is waitNotified for a semaphore's waiters: a message wakes as
// many of the Client's waiters as it announces permits (wakeCounted), and a
// woken waiter refused while permits remain (tryAgain.passOn) passes its
// wake to the next waiter, which may want fewer. overrun is the attempts'
// own server-side wait (waitSpec.overrun: the failover guard's WAIT).
func (c *Client) waitCounted(ctx context.Context, channel string, wait, overrun time.Duration, try func(actx context.Context) (bool, tryAgain, error)) (bool, error) {
	return c.waitOn(ctx, waitSpec{channel: channel, counted: true, overrun: overrun}, wait, func(actx context.Context, _ int64, _ bool) (bool, tryAgain, error) {
		return try(actx)
	})
}

// tryAgain is what a refused attempt tells the wait loop: when to try again
// without a message, (targeted) whether the lock's holder is not a
// scriptlock client, whose release sends Redisson's "0" alone, and
// (counted) whether permits remained free that another waiter may take.
type tryAgain struct {
	sleep   time.Duration
	foreign bool
	passOn  bool
	// leaseEnd (counted, > 0): the lease of the permit the attempt took,
	// or, refused, the soonest lease the server told of, ends this long
	// from now, which the Client's other waiters are told of
	// (subscriptions.leaseEnds).
	leaseEnd time.Duration
}

// waitSpec says where a waiter hears of releases: channel, every local
// waiter woken by one message (all), as many as the message's number
// (counted: a semaphore's permits), or, in targeted mode (wake set: the
// prefix of the lock's wake channels), woken by name (id) on this client's
// wake channel, and on channel too while the last attempt found a holder
// that is not a scriptlock client (tryAgain.foreign).
type waitSpec struct {
	channel string
	all     bool
	counted bool
	wake    string
	id      string
	idle    time.Duration // targeted: longest sleep without calling Redis while registered
	overrun time.Duration // added to waitOverrun: an attempt's own server-side wait (the failover guard's WAIT)
}

// attemptContext is the context of a wait's attempts: ctx, cut off
// waitOverrun (plus overrun) after deadline when the wait has one (wait > 0).
func attemptContext(ctx context.Context, wait time.Duration, deadline time.Time, overrun time.Duration) (context.Context, context.CancelFunc) {
	if wait <= 0 {
		return ctx, func() {}
	}
	return context.WithDeadline(ctx, deadline.Add(addSat(waitOverrun, overrun)))
}

// addSat is a + b for durations that are not negative, at most the longest
// Duration: a long setting (a failover guard timeout of centuries) must not
// wrap around to a deadline in the past.
func addSat(a, b time.Duration) time.Duration {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// msDuration is ms milliseconds as a Duration, the longest Duration for more
// than it holds (about 292 years): a lease Redis reports (a Java client's, or
// a key another program set) may be longer, and must not wrap around to a
// negative one, which reads as a holder without expiry.
func msDuration(ms int64) time.Duration {
	if ms > math.MaxInt64/int64(time.Millisecond) {
		return math.MaxInt64
	}
	if ms < math.MinInt64/int64(time.Millisecond) {
		return math.MinInt64
	}
	return time.Duration(ms) * time.Millisecond
}

// cutByWait reports an attempt that failed because the wait's end cut it
// off (actx's deadline passed, and it is not ctx's own): the wait ran out.
// The call may see the deadline pass before actx's timer fires.
func cutByWait(ctx, actx context.Context, err error) bool {
	// Not by comparing actx with ctx: a caller's context type may not be
	// comparable (the comparison panics). actx is ctx, or ctx bounded by
	// the wait's end: a deadline that is not before ctx's own is ctx's.
	if ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	end, ok := actx.Deadline()
	if !ok {
		return false // no wait's end
	}
	if own, ok := ctx.Deadline(); ok && !own.After(end) {
		return false // ctx's deadline, not the wait's
	}
	return actx.Err() != nil || !time.Now().Before(end)
}

// capSleep cuts sleep to the time left until deadline when the wait has a
// bound (wait > 0); capped reports that the wait's own end, not a fallback
// or poll, will end that sleep.
func capSleep(sleep, wait time.Duration, deadline time.Time) (_ time.Duration, capped bool) {
	if wait > 0 {
		if left := time.Until(deadline); left < sleep {
			return left, true
		}
	}
	return sleep, false
}

// attemptCut gives a wait's attempts their context (next); end lets it go
// once the wait is over.
type attemptCut struct {
	attempted bool            // an attempt was made
	ctx       context.Context // for the attempts after the first: made at the second
	stop      func()
}

// next is the context of a wait's next attempt, bounded by actx. The first
// attempt gets actx. The later ones are made while the wait waits (off the
// uncontended path, which allocates nothing more): Close cuts them off
// closeUndoMax after it began (cutAttempts), as against a server that
// stopped answering such an attempt would hang until rueidis drops its
// connection as dead (ConnWriteTimeout, 10 s by default), and Close with
// it. It is then undone as any attempt of unknown outcome Close meets. One
// context serves them all: the wait makes no attempt once Close began. Its
// calls are marked (cutCallKey) for sharedDial, which returns them once
// they are cut off: rueidis does not watch every call's cancellation.
func (a *attemptCut) next(c *Client, actx context.Context) context.Context {
	if !a.attempted {
		a.attempted = true
		return actx
	}
	if a.ctx == nil {
		ctx, cancel := context.WithCancel(context.WithValue(actx, cutCallKey{}, true))
		stop := context.AfterFunc(c.cutCtx, cancel)
		a.ctx, a.stop = ctx, func() { stop(); cancel() }
	}
	return a.ctx
}

func (a *attemptCut) end() {
	if a.stop != nil {
		a.stop()
	}
}

// waitOn is waitNotified for any waitSpec. try receives the context its
// calls are bounded by, the score of the targeted wake that woke the waiter
// (0: none, or not targeted), and polite on a first attempt made while a
// release of this client's is handing the lock to a woken waiter.
func (c *Client) waitOn(ctx context.Context, ws waitSpec, wait time.Duration, try func(actx context.Context, since int64, polite bool) (bool, tryAgain, error)) (bool, error) {
	var deadline time.Time
	if wait > 0 {
		deadline = time.Now().Add(wait)
	}
	actx, cancelAttempts := attemptContext(ctx, wait, deadline, ws.overrun)
	defer cancelAttempts()
	st := c.statsFrom(ctx) // nil unless observed
	var w, zw *waiter      // zw: w listening for Redisson's "0" as well
	woken := false         // a hand-off signal was taken and not yet used by an attempt
	polite := false
	if ws.wake != "" && wait != 0 {
		// Already subscribed (other local waiters, or lingering): be
		// reachable by name before the first attempt registers us.
		w = c.subs.joinIfReady(ws.wake, ws.id)
		polite = c.subs.handingOff(ws.wake)
	}
	since := int64(0)
	var cut attemptCut
	defer cut.end()
	rt := newRetrier()
	defer func() {
		if zw != nil {
			// A "0" it was woken by and did not use is passed on to the
			// next local waiter listening for it: no release names that
			// wake, so neither the server (MutexWaitCancel) nor leave would.
			// If the signal was a named wake after all, the extra attempt
			// it causes is harmless.
			unused := woken || len(zw.wake) > 0
			c.subs.leave(zw)
			if unused {
				c.subs.passOn(zw.sub)
			}
		}
		if w != nil {
			again := false
			if woken && ws.wake == "" {
				// The signal was meant for the next contender: pass it on.
				// When another is pending, which leave hands over: on a
				// semaphore's channel each was counted for a permit (a
				// PermitSemaphore's AddPermits announces those it added,
				// not the count), so both go on.
				again = !offer(w.wake) && ws.counted
			}
			c.subs.leave(w)
			if again {
				c.subs.passOn(w.sub)
			}
		}
	}()
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	// join subscribes one waiter; on false the wait is over with
	// (false, err), and the waiter returned, if any, is left as w is.
	join := func(f func(context.Context) (*waiter, error)) (*waiter, bool, error) {
		// One context, cancelled below: a second one made and dropped
		// would stay a child of ctx (or a goroutine watching it) until
		// ctx ends.
		var jctx context.Context
		var cancel context.CancelFunc
		if wait > 0 {
			// Cut off waitOverrun past the wait's end, as an attempt is:
			// a SUBSCRIBE sent just before the end, to a server that
			// answers, is not taken for one the server left unanswered.
			jctx, cancel = context.WithDeadline(ctx, deadline.Add(waitOverrun))
		} else {
			jctx, cancel = context.WithCancel(ctx)
		}
		stop := context.AfterFunc(c.closingCtx, cancel)
		j, err := f(jctx)
		stop()
		cancel()
		switch {
		case err == nil && wait > 0 && !time.Now().Before(deadline):
			// Confirmed after the wait's end: it ran out, with every call
			// answered and the lock last seen held.
			return j, false, nil
		case err == nil:
			return j, true, nil
		case ctx.Err() != nil:
			return nil, false, fmt.Errorf("wait ended: %w", ctx.Err())
		case c.closingCtx.Err() != nil:
			return nil, false, ErrClosed
		case errors.Is(err, context.DeadlineExceeded):
			// The server did not confirm the subscription (or the end of
			// the one before it) by the wait's end: the wait ran out on
			// an outage, not on a holder.
			return nil, false, errSubscribeUnanswered
		}
		return nil, false, fmt.Errorf("subscribe: %w", err)
	}
	for {
		if err := ctx.Err(); err != nil {
			// With the refusal that was to be made again, if there was one.
			return false, fmt.Errorf("wait ended: %w", rt.failed(ctx, err))
		}
		if c.closingCtx.Err() != nil {
			return false, ErrClosed
		}
		if wait > 0 && cut.attempted && actx.Err() != nil {
			// Run again only past the wait's end and its overrun (a
			// goroutine scheduled late on a loaded machine): an attempt now
			// would be cut off unsent and reported as one the server left
			// unanswered. The wait ran out on the last answer it had.
			return false, nil
		}
		var politeAt time.Time // when a polite attempt queued us behind a hand-off
		if polite {
			politeAt = time.Now()
		}
		if hook := c.testHookAttempt.Load(); hook != nil && w != nil {
			(*hook)(ctx, false)
		}
		done, next, err := try(cut.next(c, actx), since, polite)
		if hook := c.testHookAttempt.Load(); hook != nil && w != nil {
			(*hook)(ctx, true)
		}
		if wait != 0 && rt.again(ctx, err, deadline) {
			continue // as it was: nothing ran
		}
		since, polite = 0, false
		if st != nil {
			st.attempts++
		}
		if cutByWait(ctx, actx, err) {
			return false, nil // try undoes what the attempt may have done
		}
		if err != nil {
			return false, c.attemptFailed(ctx, &rt, err)
		}
		rt.answered()
		if next.leaseEnd > 0 {
			c.subs.leaseEnds(ws.channel, time.Now().Add(next.leaseEnd))
		}
		if done {
			woken = false
			return true, nil
		}
		if woken && next.passOn {
			// Woken, and refused with permits left that this waiter
			// cannot use: the next one may want fewer.
			c.subs.passAfter(w)
		}
		woken = false // the attempt used the signal: the lock was not free
		if wait == 0 || (wait > 0 && !time.Now().Before(deadline)) {
			return false, nil
		}
		if w == nil || w.dead() {
			if w != nil {
				c.subs.leave(w)
				w = nil
			}
			var ok bool
			w, ok, err = join(func(jctx context.Context) (*waiter, error) {
				if ws.wake != "" {
					return c.subs.joinTargeted(jctx, ws.wake, ws.id)
				}
				if ws.counted {
					return c.subs.joinCounted(jctx, ws.channel)
				}
				return c.subs.joinWith(jctx, ws.channel, ws.all)
			})
			if !ok {
				return false, err
			}
			if zw != nil {
				// zw still wakes the wake-up channel of the waiter made
				// again, which nobody waits on now.
				c.subs.rewake(zw, w)
			}
			// Subscribed: try again before waiting (politely if a hand-off
			// of this client's is still under way).
			polite = ws.wake != "" && c.subs.handingOff(ws.wake)
			continue
		}
		if ws.wake != "" {
			if zw != nil && (!next.foreign || zw.dead()) {
				c.subs.leave(zw)
				zw = nil
			}
			if zw == nil && next.foreign {
				// Held by a Redisson client: its release sends "0" alone.
				var ok bool
				zw, ok, err = join(func(jctx context.Context) (*waiter, error) { return c.subs.joinZero(jctx, ws.channel, w) })
				if !ok {
					return false, err
				}
				continue // try again before waiting, as above
			}
		}
		sleep := next.sleep
		for {
			if sleep <= 0 {
				sleep = notifyFallback
			}
			var capped bool
			sleep, capped = capSleep(sleep, wait, deadline)
			if timer == nil {
				timer = time.NewTimer(sleep)
			} else {
				timer.Reset(sleep)
			}
			rearm := false
			select {
			case <-w.wake:
				if st != nil {
					st.wakeups++
				}
				woken = true
			case <-timer.C:
				if st != nil && !capped {
					st.timers++
				}
				if c.testHookFallback != nil {
					c.testHookFallback(ctx)
				}
				// A polite waiter's short fallback covers a hand-off that was
				// already over; when wakes went out since, the line moves
				// and we are in it: wait on, without calling Redis.
				if !politeAt.IsZero() && ws.idle > 0 && c.subs.handedOffSince(w, politeAt) &&
					(wait < 0 || time.Now().Before(deadline)) {
					politeAt, sleep, rearm = time.Time{}, ws.idle, true
				}
			case <-ctx.Done():
				return false, fmt.Errorf("wait ended: %w", ctx.Err())
			case <-c.closingCtx.Done():
				return false, ErrClosed
			}
			// A named wake that arrived while the timer fired and re-armed
			// the wait keeps its score through the next pass, so the
			// attempt it causes takes the waiter's place back if it loses.
			if sc := w.takeSince(); sc != 0 {
				since = sc
			}
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
			if !rearm {
				break
			}
		}
	}
}

// attemptFailed is the error of a wait whose attempt failed with err. When
// Close began while the attempt was in flight and no answer came from Redis
// (the server stopped answering: the wait would settle the attempt and go
// on, or its connection broke as Close began), Close ended the wait: it
// returns ErrClosed, as every wait Close ends does, with err. What the
// attempt may have done is undone as for any attempt of unknown outcome.
func (c *Client) attemptFailed(ctx context.Context, rt *retrier, err error) error {
	if ctx.Err() == nil && c.closingCtx.Err() != nil && unknownOutcome(err) {
		return fmt.Errorf("%w (an attempt in flight failed: %w)", ErrClosed, err)
	}
	return rt.failed(ctx, err)
}

// backoff is a doubling, half-random delay between attempts, for primitives
// whose contenders cannot be woken by a message (MultiLock's members, RedLock's
// quorum): the randomness keeps contenders that collided from retrying in
// lockstep.
type backoff struct{ cur, max time.Duration }

// wait sleeps the next delay, cut short at deadline (zero: none), and returns
// ctx's error if ctx ends first.
func (b *backoff) wait(ctx context.Context, deadline time.Time) error {
	sleep := b.cur/2 + rand.N(b.cur/2+1)
	b.cur = min(b.cur*2, b.max)
	if !deadline.IsZero() {
		sleep = min(sleep, time.Until(deadline))
	}
	t := time.NewTimer(sleep)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
