package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
)

// Semaphore is a distributed counting semaphore with Redisson's RSemaphore
// semantics and layout: the number of available permits is a string counter
// under the name, and every release is announced on redisson_sc:{name} so
// waiters retry at once. Permits are not tied to an owner: anyone may release
// them (use PermitSemaphore for permits that belong to their holder and
// return to the pool when the holder dies). Every call on a name another
// kind of lock holds fails with ErrWrongKind and changes nothing.
type Semaphore struct {
	c       *Client
	name    string
	key     string
	channel string
	// deleted: redisson_sc_latch:{name}:deleted, the mark of the last
	// Delete (see Delete).
	deleted string
	cfg     *config // shared with the Client, or the handle's own with options
}

// Semaphore returns a handle for the semaphore called name. opts override the
// Client's settings for this handle; WithReleaseTimeout, WithFailoverGuard
// and WithGuardReplicas apply. An invalid name or option is an error here.
func (c *Client) Semaphore(name string, opts ...LockOption) (*Semaphore, error) {
	cfg, key, err := c.handleConfig(kindSemaphore, name, opts)
	if err != nil {
		return nil, err
	}
	return &Semaphore{c: c, name: name, key: key, cfg: cfg, channel: redissonName("redisson_sc", key),
		deleted: redissonName("redisson_sc_latch", key) + ":deleted"}, nil
}

// Name returns the semaphore's name.
func (s *Semaphore) Name() string { return s.name }

// Key returns the Redis key of the permit counter (prefix + name).
func (s *Semaphore) Key() string { return s.key }

func (s *Semaphore) check(ctx context.Context) error {
	return s.c.checkHandle(ctx)
}

// fail is the error of operation op on the semaphore.
func (s *Semaphore) fail(op string, err error) error {
	return fmt.Errorf("scriptlock: semaphore %q: %s: %w", s.name, op, err)
}

func (c *Client) checkHandle(ctx context.Context) error {
	if err := checkCtx(ctx); err != nil {
		return err
	}
	if c.closed() {
		return ErrClosed
	}
	return nil
}

// checkCtx is checkHandle for the calls that give back what the caller holds
// (either semaphore's Release, CountDown): they still run once Close has
// begun, since Close leaves the rueidis client open, and a Semaphore's
// permits, which have no lease, would otherwise be lost for good.
func checkCtx(ctx context.Context) error {
	if ctx == nil {
		return invalidf("nil context")
	}
	return nil
}

// maxCount bounds permits and counts: the scripts compare them as Lua
// numbers (doubles), exact only up to 2^53.
const maxCount = 1<<53 - 1

func positive(what string, n int64) error {
	if n <= 0 {
		return invalidf("%s must be positive, got %d", what, n)
	}
	if n > maxCount {
		return invalidf("%s must be at most %d, got %d", what, int64(maxCount), n)
	}
	return nil
}

// TrySetPermits sets the number of permits, only if the semaphore has none set
// yet. It reports whether it set them. A call whose reply is lost with its
// connection is made again and still reports true when its first attempt
// set them (it leaves a record of its own,
// redisson_sc_latch:{name}:set:<client-id>:<n>, for a minute), and sets
// nothing again, even if the semaphore was deleted in between, and another
// caller may have set new permits since. An error that remains, a dial
// error too (rueidis makes the call again on a new connection after the one
// it was sent on broke, and answers that dial's error), leaves the outcome
// unknown and says so: the permits may have been set.
func (s *Semaphore) TrySetPermits(ctx context.Context, permits int64) (bool, error) {
	if err := s.check(ctx); err != nil {
		return false, s.fail("set permits", err)
	}
	if err := positive("permits", permits); err != nil {
		return false, s.fail("set permits", err)
	}
	ok, err := s.c.trySet(ctx, "redisson_sc_latch", s.key, func(ctx context.Context, record, nonce, publish string) (bool, error) {
		return generated.SemaphoreTrySet(ctx, s.c.rc, s.key, s.channel, record, permits, nonce, publish, s.c.recordTTL)
	})
	if err != nil {
		return false, s.fail("set permits", notCount(err))
	}
	return ok, nil
}

// Acquire takes n permits, waiting until that many are available or ctx
// ends. Waiting is notified: a release wakes as many of the Client's waiters
// as permits are free, as Redisson's does, and a woken waiter that wants
// more than are free passes the wake on to the next one. The n permits
// are taken all at once or not at all, and waiters are not queued, as with
// Redisson's RSemaphore: while a request for n waits, smaller requests take
// permits as they come back, and can keep it waiting as long as they do.
// Under the failover guard (WithFailoverGuard), permits taken that no
// replica acknowledged in time are given back, and the error errors.Is
// ErrNotReplicated.
func (s *Semaphore) Acquire(ctx context.Context, n int64) error {
	_, err := s.acquire(ctx, n, -1)
	return err
}

// TryAcquire takes n permits if they become available within wait (0: a
// single attempt). When the wait runs out first, nothing is taken and the
// error errors.Is ErrNotAcquired, as TryLock's does: a *NotAcquiredError,
// with Unanswered when the server did not answer the wait's last attempt,
// or its subscription to releases (an outage, not permits held by others).
func (s *Semaphore) TryAcquire(ctx context.Context, n int64, wait time.Duration) error {
	if wait < 0 {
		return s.fail(fmt.Sprintf("acquire %d", n), invalidf("negative wait %s", wait))
	}
	_, err := s.acquire(ctx, n, wait)
	return err
}

func (s *Semaphore) acquire(ctx context.Context, n int64, wait time.Duration) (bool, error) {
	if s.c.observing(ctx) {
		_, ok, err := observeTake(s.c, ctx, Op{PrimitiveSemaphore, s.name}, func(ctx context.Context) (struct{}, bool, error) {
			ok, err := s.acquire(ctx, n, wait)
			return struct{}{}, ok, err
		}, func(ctx context.Context, _ struct{}) error { return s.Release(context.WithoutCancel(ctx), n) })
		return ok, err
	}
	if err := s.check(ctx); err != nil {
		return false, s.fail(fmt.Sprintf("acquire %d", n), err)
	}
	if err := positive("permits", n); err != nil {
		return false, s.fail(fmt.Sprintf("acquire %d", n), err)
	}
	if !s.c.enter() {
		return false, s.fail(fmt.Sprintf("acquire %d", n), ErrClosed)
	}
	defer s.c.leave()
	var taken string // the latch of the attempt that took the permits
	// unanswered: the last attempt failed without the server's answer, as
	// for a lock (NotAcquiredError.Unanswered); an answer clears it.
	unanswered := true
	var waitUntil time.Time
	if wait > 0 {
		waitUntil = time.Now().Add(wait)
	}
	acquired, err := s.c.waitCounted(ctx, s.channel, wait, s.cfg.guardOverrun(), func(actx context.Context) (bool, tryAgain, error) {
		// Bounded by actx (ctx, and the wait's end). Each attempt has its own latch key: an attempt
		// whose reply is lost is undone through it, exactly once, and cannot
		// take permits if it reaches the server after its undo.
		latch := s.latch()
		guard := s.c.guarded(actx, s.cfg, s.key)
		sent := time.Now()
		res, acked, err := s.tryOnce(actx, latch, n, guard)
		unanswered = err != nil
		if err != nil && unknownOutcome(err) {
			// An attempt whose connection broke under a wait (the node
			// died, went away in a failover, or another call's deadline broke
			// it: foreignDeadline) is undone before the wait
			// goes on, as a lock's is; otherwise in the background, and
			// the error ends the call.
			if wait != 0 && (brokenConn(err) || foreignDeadline(actx, err)) {
				// Atomic: an undo that outlived its bound (callBounded)
				// may still answer as the next one begins.
				var given atomic.Int64
				ok, refused := s.c.settleWith(ctx, s.cfg.releaseTimeout, waitUntil, func(ctx context.Context) error {
					g, err := s.undoOnce(ctx, latch, n)
					if err == nil {
						// Only an answer: an attempt abandoned at its bound
						// may end after a later one answered.
						given.Store(g)
					}
					return err
				}, func() { s.undoLater(latch, n, sent) })
				if ok {
					if given.Load() == 0 && time.Since(sent) >= s.c.recordTTL {
						// Redis was out of reach for longer than the
						// record lives: nothing tells any more whether
						// the attempt took permits, as for undoLater.
						s.undoFailed(n, false, nil)
					}
					return false, tryAgain{}, settledError{err}
				}
				if refused != nil {
					err = unsettled(err, refused)
				}
			}
			s.undoLater(latch, n, sent)
		}
		if err == nil && res.Ok == 1 {
			if o := s.c.cfg.observer; o != nil && guard.on() {
				s.c.reportGuard(o, GuardEvent{Acknowledged: acked, Duration: time.Since(sent)})
			}
			if !acked {
				// No replica has the permits taken: a failover now would
				// promote one that hands them out again. Give them back
				// through the attempt's latch (exactly once), in the
				// background should that fail.
				_, uerr := s.undoUnacked(latch, n, sent)
				_, err := s.c.unackedWaitError(actx, s.cfg, s.key, guard, wait, uerr == nil)
				return false, tryAgain{}, err
			}
			taken = latch
		}
		// Refused with some permits free: fewer than n, which a waiter
		// wanting fewer may take.
		return err == nil && res.Ok == 1, tryAgain{sleep: notifyFallback, passOn: err == nil && res.Ok != 1 && res.Permits > 0}, err
	})
	if errors.Is(err, errSubscribeUnanswered) {
		// Ran out with the subscription unconfirmed: unanswered too.
		err, unanswered = nil, true
	}
	if err != nil {
		return false, s.fail(fmt.Sprintf("acquire %d", n), notCount(err))
	}
	if acquired && s.c.closed() {
		// Granted after Close began: the Client can no longer release the
		// permits, so they go back now, as a lock granted then does.
		// Permits have no lease: a give-back that failed leaves them taken
		// for good, which the log tells.
		if err := s.undo(taken, n, s.cfg.releaseTimeout); err != nil {
			// Said as it happened: a refusal is no outage.
			why := "no answer from Redis"
			if redisRefusal(err) != nil {
				why = "Redis refused the give-back"
			}
			s.c.log.Warn("semaphore permits may be lost: an acquisition granted after Close began could not give them back ("+why+"); give them back with AddPermits",
				"semaphore", s.name, "key", s.key, "permits", n, "error", err.Error())
		}
		return false, s.fail(fmt.Sprintf("acquire %d", n), ErrClosed)
	}
	if !acquired {
		// The wait ran out (TryAcquire): tell an outage from contention.
		return false, &NotAcquiredError{Name: s.name, Unanswered: unanswered,
			msg: fmt.Sprintf("scriptlock: semaphore %q: acquire %d: %s within %s", s.name, n, ErrNotAcquired, wait)}
	}
	return true, nil
}

// tryOnce makes one attempt to take n permits, recorded under latch. With
// the failover guard on, WAIT follows the script on its connection, and
// acked reports whether guard.acks replicas acknowledged it (always true
// unguarded).
func (s *Semaphore) tryOnce(ctx context.Context, latch string, n int64, guard guardWait) (generated.SemaphoreAcquireResult, bool, error) {
	if !guard.on() {
		res, err := generated.SemaphoreAcquire(ctx, s.c.rc, s.key, latch, s.deleted, n, s.c.recordTTL)
		return res, true, err
	}
	reply, acked, err := s.c.sendGuarded(ctx, guard, func() (rueidis.Completed, error) {
		return generated.SemaphoreAcquireCommand(s.c.rc, s.key, latch, s.deleted, n, s.c.recordTTL)
	})
	if err != nil {
		return generated.SemaphoreAcquireResult{}, false, err
	}
	res, err := generated.DecodeSemaphoreAcquire(reply)
	return res, acked, err
}

// undo gives back at once, bounded by timeout, the n permits the attempt
// recorded under latch may have taken.
func (s *Semaphore) undo(latch string, n int64, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// Ended at that bound, not cut by a deadline rueidis sees, which closed
	// the connection renewals share (withoutDeadline).
	_, err := callAgain(ctx, func() (int64, error) { return s.undoOnce(withoutDeadline(ctx), latch, n) })
	return err
}

// undoUnacked gives back at once, through its record latch (exactly once),
// the n permits an acquisition or drain sent at sent took that no replica
// acknowledged, and reports the permits given back; should that fail, they
// go back in the background (undoLater). A panic of the give-back (a client
// wrapper's) goes on on the caller's goroutine once the background undo has
// taken it over, as a settling undo's does (settleWith): the permits, which
// have no lease, were otherwise lost for good.
func (s *Semaphore) undoUnacked(latch string, n int64, sent time.Time) (given int64, err error) {
	goOnAfter(func() {
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.releaseTimeout)
		defer cancel()
		// Not a deadline rueidis sees (see undo).
		given, err = callAgain(ctx, func() (int64, error) { return s.undoOnce(withoutDeadline(ctx), latch, n) })
	}, func() { s.undoLater(latch, n, sent) })
	if err != nil {
		s.undoLater(latch, n, sent)
	}
	return given, err
}

// undoOnce makes one attempt (SemaphoreUndo) to give back the n permits the
// attempt recorded under latch may have taken, and reports the permits
// given back. When another kind of lock has taken the name, they cannot go
// back: the log tells, and the undo is over (nil); so is a give-back
// refused before it changed anything (NO_PUBLISH), which reports
// givebackRefused.
func (s *Semaphore) undoOnce(ctx context.Context, latch string, n int64) (int64, error) {
	given, err := publishing(s.c, func(publish string) (int64, error) {
		return generated.SemaphoreUndo(ctx, s.c.rc, s.key, s.channel, latch, s.deleted, s.c.recordTTL, publish)
	})
	if err != nil && errors.Is(notCount(err), ErrWrongKind) {
		if n <= 0 {
			// A DrainPermits of unknown outcome (n unknown): how many it
			// took, its record tells ("<n>:<mark>"), for the log.
			s.c.log.Warn("semaphore permits lost: a DrainPermits whose outcome was unknown took them, and another kind of lock now uses the name, so they cannot be given back",
				"semaphore", s.name, "key", s.key, "permits", s.drained(ctx, latch), "error", err.Error())
			return 0, nil
		}
		s.c.undoOtherKind(s.name, s.key, n, err)
		return 0, nil
	}
	if errors.Is(err, generated.ErrNoPublish) {
		// Refused before it gave anything back (the release message's
		// channel, or the publish command, is not the ACL user's): the same
		// call made again is refused again, so the undo is over.
		permits := any(n)
		if n <= 0 {
			permits = s.drained(ctx, latch)
		}
		s.c.log.Warn("semaphore permits not given back: the Client's ACL user may not publish the release message the give-back sends, so nothing was changed; grant it the channel (or the command) the error names, and give them back with AddPermits",
			"semaphore", s.name, "key", s.key, "permits", permits, "error", err.Error())
		return givebackRefused, nil
	}
	return given, err
}

// drained reads from a drain's record the permits it took: "<n>:<mark>";
// "unknown" when the record tells none (it could not be read).
func (s *Semaphore) drained(ctx context.Context, record string) any {
	v, err := s.c.rc.Do(ctx, s.c.rc.B().Get().Key(record).Build()).ToString()
	if n, _, ok := strings.Cut(v, ":"); err == nil && ok {
		if p, err := strconv.ParseInt(n, 10, 64); err == nil {
			return p
		}
	}
	return "unknown"
}

// givebackRefused is what undoOnce reports given back when the give-back
// was refused before it changed anything (NO_PUBLISH, logged): none, and
// not because the attempt took none or its count went away.
const givebackRefused = -1

// undoOtherKind logs that the permits an acquisition of unknown outcome
// took cannot be given back: another kind of lock uses the name now.
func (c *Client) undoOtherKind(name, key string, n int64, err error) {
	c.log.Warn("semaphore permits lost: an acquisition whose reply was lost took them, and another kind of lock now uses the name, so they cannot be given back",
		"semaphore", name, "key", key, "permits", n, "error", err.Error())
}

// recordTTL is how long the record of a Semaphore or latch call lives: an
// acquisition attempt's, and so how long an attempt of unknown outcome can
// still be undone; a release's, AddPermits', DrainPermits', CountDown's and
// a TrySet's, longer than the call and its retries (callRecorded), so that
// a repeat finds it.
const recordTTL = time.Minute

// undoLater gives back, in the background, the n permits an attempt of
// unknown outcome sent at sent may have taken, retrying while its latch
// lives (and once more when Close stops it: undoUntil). Permits have no
// lease: an undo that never got through (Redis unreachable all that time)
// leaves them taken for good, and one that found no record after sent +
// recordTTL cannot tell an attempt that took nothing from a record that
// expired; the log tells of both.
func (s *Semaphore) undoLater(latch string, n int64, sent time.Time) {
	c := s.c
	until := time.Now().Add(c.recordTTL)
	hook := c.testGiveBack
	// A DrainPermits of this Client waits for the give-back (givenBack):
	// the permits come back before it drains, not after.
	done := c.givingBackStart(s.key)
	// A panic of its calls (a client wrapper's) has no caller to reach.
	started := c.background(logged(c.log, "undoing a semaphore acquisition of unknown outcome", func() {
		defer done()
		if hook != nil {
			hook()
		}
		var given atomic.Int64 // see Acquire
		// The refusal the last attempt got, if Redis answered it: no
		// outage, nor a Close that left it unanswered.
		var refused atomic.Pointer[error]
		if !c.undoUntil(until, s.cfg.releaseTimeout, func(ctx context.Context) error {
			g, err := s.undoOnce(ctx, latch, n)
			if err == nil { // see Acquire
				given.Store(g)
			}
			if r := redisRefusal(err); r != nil {
				refused.Store(&r)
			} else {
				refused.Store(nil)
			}
			return err
		}) {
			var r error
			if p := refused.Load(); p != nil {
				r = *p
			}
			// Stopped by Close before its record's life ended: Close's
			// last attempt got no answer, unless a refusal.
			s.undoFailed(n, r == nil && c.ctx.Err() != nil && time.Since(sent) < c.recordTTL, r)
		} else if given.Load() == 0 && time.Since(sent) >= c.recordTTL {
			s.undoFailed(n, false, nil)
		}
	}))
	if !started {
		defer done()
		// Close began and runs no more background work, but waits for this
		// acquisition: undo here, within the second Close gives it. A record
		// found gone after its life tells nothing, as above.
		ctx, cancel := context.WithTimeout(context.Background(), min(s.cfg.releaseTimeout, closeUndoMax))
		defer cancel()
		// Bounded though a call waits on a connection being opened (see
		// callBounded).
		var given int64
		err := c.callBounded(ctx, func(ctx context.Context) error {
			var err error
			given, err = callAgain(ctx, func() (int64, error) { return s.undoOnce(ctx, latch, n) })
			return err
		})
		if err != nil || (given == 0 && time.Since(sent) >= c.recordTTL) {
			r := redisRefusal(err)
			s.undoFailed(n, r == nil && err != nil && time.Since(sent) < c.recordTTL, r)
		}
	}
}

// undoFailed logs that the n permits an attempt to be undone (of unknown
// outcome, or unacknowledged under the failover guard) may have
// taken could not be given back: while its record lived, or, closed, before
// the Client's Close (which gives an undo at most a second) though its
// record lived on, or because Redis refused the undo (refused, its error),
// so that the log does not tell of an outage that may not have been.
func (s *Semaphore) undoFailed(n int64, closed bool, refused error) {
	why := "could not be undone while its record lived (Redis unreachable)"
	attrs := []any{"semaphore", s.name, "key", s.key}
	switch {
	case refused != nil:
		why = "could not be undone: Redis refused the undo"
		attrs = append(attrs, "error", refused.Error())
	case closed:
		why = "got no answer to its undo before the Client closed (Close gives an undo at most a second)"
	}
	if n <= 0 {
		// A drain of unknown outcome: how many it took is unknown.
		s.c.log.Warn("semaphore permits may be lost: a DrainPermits whose outcome is unknown "+why+"; if it took permits, give them back with AddPermits",
			attrs...)
		return
	}
	s.c.log.Warn("semaphore permits may be lost: an acquisition to be undone (its reply lost, or no replica acknowledged it) "+why+"; if it took them, give them back with AddPermits",
		append(attrs, "permits", n)...)
}

// redisRefusal returns err when it is Redis's answer to the call (an error
// reply, a script's declared error), else nil: a call that got no answer.
func redisRefusal(err error) error {
	var re *rueidis.RedisError
	var se *generated.ScriptError
	if (errors.As(err, &re) && re != nil && !re.IsNil()) || errors.As(err, &se) {
		return err
	}
	return nil
}

// Release returns n permits and wakes as many waiters as permits are then
// free (on every Client, Redisson's included). Permits have no owner:
// any caller may release any number, also more than it took, and the count
// then grows beyond the permits first set, as with Redisson's release.
// Like Mutex.Unlock it runs
// detached from ctx, bounded by the release timeout. A call whose reply is
// lost is made again and returns the permits once (each call records itself
// for a minute under redisson_sc_latch:{name}:<client-id>:<n>, which the
// repeat finds); an error that remains means the outcome is unknown, so
// calling Release again may return them twice, a dial error too (it says
// so: rueidis makes the call again on a new connection after the one it
// was sent on broke, and answers that dial's error). Release works during and after the Client's Close, as
// long as the rueidis client is open: a worker that still holds permits at
// shutdown can give them back.
func (s *Semaphore) Release(ctx context.Context, n int64) error {
	if s.c.observing(ctx) {
		return s.c.observeRelease(ctx, Op{PrimitiveSemaphore, s.name}, func(ctx context.Context) error { return s.Release(ctx, n) })
	}
	if err := checkCtx(ctx); err != nil {
		return s.fail(fmt.Sprintf("release %d", n), err)
	}
	if err := positive("permits", n); err != nil {
		return s.fail(fmt.Sprintf("release %d", n), err)
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.releaseTimeout)
	defer cancel()
	if _, err := s.change(rctx, n, false, true); err != nil {
		return s.fail(fmt.Sprintf("release %d", n), err)
	}
	return nil
}

// change adds n permits (Release, AddPermits) as one call recorded under its
// own latch key, so that it can be made again when its outcome is unknown
// (callRecorded); a Release that gave up there would leave the caller to
// guess: calling again could return the permits twice, for good, and not
// calling could lose them for good.
func (s *Semaphore) change(ctx context.Context, n int64, persist, bounded bool) (int64, error) {
	latch := s.latch()
	v, err := s.c.callRecorded(ctx, true, func(ctx context.Context, publish string) (int64, error) {
		if bounded {
			// A Release ends at the release timeout, not by a deadline
			// rueidis sees, which closed the connection renewals share
			// (withoutDeadline); the repeats see the deadline.
			ctx = withoutDeadline(ctx)
		}
		return generated.SemaphoreRelease(ctx, s.c.rc, s.key, s.channel, latch, n, publish, s.c.recordTTL, persist)
	})
	// A dial error does not mean nothing ran here: rueidis makes the change,
	// a script it may retry, again on a new connection (mayHaveRun).
	return v, mayHaveRun(notCount(outOfRange(err)), "the permits may have changed; calling again may change them twice")
}

// notCount makes a counter script's refusal of a key that holds no count
// (NOT_COUNT: a LeanMutex's owner) or another kind's hash (WRONGTYPE) an
// ErrWrongKind: another kind of lock uses the name. The scripts check the
// key before they write anything, their records included.
func notCount(err error) error {
	if errors.Is(err, generated.ErrNotCount) {
		return fmt.Errorf("%w: %w", ErrWrongKind, err)
	}
	return wrongKind(err)
}

// outOfRange makes the scripts' refusal of a count beyond maxCount either
// way (they undo the change) an ErrInvalidArgument.
func outOfRange(err error) error {
	if errors.Is(err, generated.ErrRange) {
		return fmt.Errorf("%w: the count would go beyond %d either way: %w", ErrInvalidArgument, int64(maxCount), err)
	}
	return err
}

// latch names a new call's record (SemaphoreAcquire, SemaphoreRelease).
func (s *Semaphore) latch() string { return s.c.recordKey("redisson_sc_latch", s.key) }

// AddPermits changes the number of permits by n: a positive n adds permits
// (and wakes as many waiters), a negative one removes them. The count may go
// negative, as with Redisson's addPermits; acquirers then wait until enough
// permits are released. It returns the new count. As Redisson's addPermits
// (a SET), it drops the counter's TTL, if any (Redisson's
// trySetPermits(n, ttl) sets one). A change that would take the count beyond
// 2^53 - 1 either way is ErrInvalidArgument and changes nothing.
func (s *Semaphore) AddPermits(ctx context.Context, n int64) (int64, error) {
	if err := s.check(ctx); err != nil {
		return 0, s.fail("add permits", err)
	}
	if n == 0 || n > maxCount || n < -maxCount {
		return 0, s.fail("add permits", invalidf("permits to add must be non-zero and at most %d either way, got %d", int64(maxCount), n))
	}
	v, err := s.change(ctx, n, true, false)
	if err != nil {
		return 0, s.fail(fmt.Sprintf("add %d permits", n), err)
	}
	return v, nil
}

// DrainPermits sets the count to 0 and returns what it was, as Redisson's
// drainPermits does: when positive, the permits it took; when zero or
// negative (a deficit AddPermits left), that count, which the drain also
// resets to 0, so no permits are owed any more. A count past 2^53 - 1, which
// Go never sets but another client may have grown, is drained whole and
// returned as 2^53 - 1, as AvailablePermits reads it. A semaphore never set
// stays unset and returns 0. As Redisson's drainPermits (a SET), it drops the
// counter's TTL, if any. A drain held up on its way to Redis and reaching it
// after ctx ended drains nothing. A drain whose outcome is unknown (ctx
// ended, or the connection stayed down, before its reply came back) fails,
// and the permits it may have taken are given back in the background,
// exactly once; a DrainPermits of the same Client waits for such
// give-backs of the semaphore begun before it (a drain's, or an
// acquisition's of unknown outcome) first, so that a drain made again on that error drains them
// rather than see them come back after it (ctx ending while it waits fails
// it, nothing drained, as Close beginning does with ErrClosed; the wait counts within the 30 s the call has,
// whatever ctx). A name another kind of lock holds is
// ErrWrongKind, and the lock is left alone. Under the failover guard
// (WithFailoverGuard), permits drained that no replica acknowledged in time
// are given back, and the error errors.Is ErrNotReplicated.
func (s *Semaphore) DrainPermits(ctx context.Context) (int64, error) {
	if err := s.check(ctx); err != nil {
		return 0, s.fail("drain", err)
	}
	// Permits this Client is giving back (a drain or an acquisition of
	// unknown outcome: undoLater) come back first: a drain made again on
	// such a drain's error answered 0, and the permits then came back
	// after it, free for anyone. The wait is within the drain's bound
	// (half a record's life, whatever ctx), not before it: a give-back on a
	// server that stopped answering tries for a record's whole life.
	ctx, cancel := s.c.recordBound(ctx)
	defer cancel()
	if err := s.c.givenBack(ctx, s.key); err != nil {
		return 0, s.fail("drain", fmt.Errorf("%w (waiting for permits of a call of unknown outcome to be given back; nothing drained)", err))
	}
	// A drain whose reply was lost is made again and answers the count the
	// first one drained (callRecorded), which would otherwise be lost.
	// Its record is reserved first, for as long as ctx waits: a drain held up
	// on its way and reaching Redis after that takes nothing (reservedCall).
	// Under the failover guard it is an acquisition of every free permit,
	// guarded as one: WAIT follows it (and each repeat, which writes its
	// record again, so its WAIT covers the drain).
	guard := s.c.guarded(ctx, s.cfg, s.key)
	acked := true
	var record string
	var sent time.Time
	v, err := s.c.reservedCall(ctx, "redisson_sc_latch", s.key, false, generated.RecordReserveStrict, func(ctx context.Context, rec, _ string, slack time.Duration) (int64, error) {
		record, sent = rec, time.Now()
		if !guard.on() {
			return generated.SemaphoreDrain(ctx, s.c.rc, s.key, rec, s.deleted, s.c.recordTTL, slack)
		}
		reply, ok, err := s.c.sendGuarded(ctx, guard, func() (rueidis.Completed, error) {
			return generated.SemaphoreDrainCommand(s.c.rc, s.key, rec, s.deleted, s.c.recordTTL, slack)
		})
		if err != nil {
			return 0, err // not built: nothing sent
		}
		acked = ok
		return generated.DecodeSemaphoreDrain(reply)
	})
	if err != nil {
		// A dial error (notSent) tells nothing here: rueidis makes the
		// drain, a script it may retry, again on a new connection after
		// the one it was sent on broke, and answers that dial's error.
		// Undoing a drain that never ran gives nothing back.
		if record != "" && (unknownOutcome(err) || notSent(err)) {
			// The drain may have run (its reply lost, or ctx ended while it
			// was on its way back): the caller never learns the permits it
			// took, which would be lost to the semaphore for good. They go
			// back through its record, exactly once, in the background (ctx
			// may have ended); a drain still on its way finds its record
			// undone and takes nothing.
			s.undoLater(record, 0, sent)
			return 0, s.fail("drain", outcomeUnknown(err, "the permits it may have taken are being given back"))
		}
		return 0, s.fail("drain", notCount(err))
	}
	if v > 0 && guard.on() {
		// A drain that took nothing (a count of 0 or less) has nothing a
		// failover could hand out again: its WAIT decides nothing.
		if o := s.c.cfg.observer; o != nil {
			s.c.reportGuard(o, GuardEvent{Acknowledged: acked, Duration: time.Since(sent)})
		}
		if !acked {
			// No replica has the drain: a failover now would promote one
			// that hands the permits out again while the caller counts
			// them as its own. They go back through the drain's record
			// (SemaphoreUndo: exactly once), in the background should
			// that fail.
			what := fmt.Sprintf("the drain was undone, its %d permits given back", v)
			given, err := s.undoUnacked(record, v, sent)
			switch {
			case err != nil:
				what = fmt.Sprintf("the drain is being undone, its %d permits given back in the background", v)
			case given == givebackRefused:
				// Refused before it changed anything (logged): the permits
				// are still taken, and nobody has them.
				what = fmt.Sprintf("the drain could not be undone, its %d permits not given back (the ACL user may not publish the give-back's message: NO_PUBLISH, logged); give them back with AddPermits", v)
			case given == 0:
				// The semaphore was deleted (or set afresh) since: the
				// permits went with the count they were drained from.
				what = fmt.Sprintf("the drain was undone; its %d permits went with the count, deleted since", v)
			}
			return 0, s.fail("drain", s.c.guardFailed(guard, what))
		}
	}
	return v, nil
}

// AvailablePermits returns the number of permits available now (0 when the
// semaphore was never set). A count past 2^53 - 1, which Go never sets but
// another client may have grown, reads as 2^53 - 1.
func (s *Semaphore) AvailablePermits(ctx context.Context) (int64, error) {
	if err := s.check(ctx); err != nil {
		return 0, s.fail("available permits", err)
	}
	v, err := generated.SemaphoreAvailable(ctx, s.c.rc, s.key)
	if err != nil {
		return 0, s.fail("available permits", notCount(err))
	}
	return v, nil
}

// Delete removes the semaphore, as Redisson's RSemaphore.delete does, and
// reports whether there was one. Waiters keep waiting: a deleted semaphore
// has no permits until TrySetPermits or AddPermits sets some again, and a
// Release after Delete adds its permits to a new count. The records of
// acquisition attempts (redisson_sc_latch:{name}:...) are not listed anywhere
// to delete; they expire within a minute. Delete leaves a mark of its own
// (redisson_sc_latch:{name}:deleted, for as long), so that the undo of an
// acquisition made before it, whose reply was lost, gives nothing back to a
// count set since. Delete leaves a record of its own answer too: made
// again after its reply was lost, it answers as the first attempt did and
// deletes nothing, so a count set since survives. An error that remains, a
// dial error too, leaves the outcome unknown (it says so).
// A name another kind of lock holds is ErrWrongKind, and the lock is left
// alone.
func (s *Semaphore) Delete(ctx context.Context) (bool, error) {
	if err := s.check(ctx); err != nil {
		return false, s.fail("delete", err)
	}
	ok, err := s.c.deleteRecorded(ctx, "redisson_sc_latch", s.key, func(ctx context.Context, record, _ string, slack time.Duration) (bool, error) {
		return generated.SemaphoreDelete(ctx, s.c.rc, s.key, record, s.deleted, s.c.recordTTL, slack)
	})
	if err != nil {
		// A dial error is not a call never sent (mayHaveRun, as for change).
		return false, s.fail("delete", mayHaveRun(notCount(err), "the semaphore may have been deleted; deleting again may delete a count set since"))
	}
	return ok, nil
}
