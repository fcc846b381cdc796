package scriptlock

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
)

var (
	// ErrUnknownPermit: PermitSemaphore.Release or Extend of a permit id the
	// semaphore does not hold: never issued, released already, or expired and
	// reclaimed. It satisfies errors.Is(err, ErrNotHeld).
	ErrUnknownPermit error = &subError{"unknown permit", ErrNotHeld}
	// ErrPermitExpired: a permit was released after its lease had ended. The
	// permit is back in the pool, but the work done under it was not covered
	// by the lease. It satisfies errors.Is(err, ErrNotHeld).
	ErrPermitExpired error = &subError{"permit lease had ended", ErrNotHeld}
)

// PermitSemaphore is a distributed semaphore whose permits belong to their
// holder and carry a lease, with Redisson's RPermitExpirableSemaphore
// semantics and layout: free permits are a string counter under the name,
// permits held are a sorted set {name}:timeout of permit id -> lease end, and
// releases are announced on redisson_sc:{name}.
//
// Acquire returns a random 128-bit permit id as 32 hex digits; only that id
// releases the permit. In Redis (and on the wire) the id is its 16 raw bytes,
// as Redisson keeps it, so Go and Java release each other's permits. A
// permit whose holder dies returns to the pool when its lease ends.
// Lease ends are measured on the Redis server's clock (TIME inside the
// scripts), not the client's: a client whose clock is off by minutes can
// neither reclaim live permits early nor keep dead ones.
// Every call on a name another kind of lock holds fails with ErrWrongKind
// and changes nothing.
type PermitSemaphore struct {
	c        *Client
	name     string
	key      string
	timeouts string
	channel  string
	cfg      *config // shared with the Client, or the handle's own with options
}

// PermitSemaphore returns a handle for the expirable-permit semaphore called
// name. opts override the Client's settings for this handle;
// WithReleaseTimeout, WithFailoverGuard and WithGuardReplicas apply (each
// permit's lease is given to Acquire). An invalid name or option is an
// error here.
func (c *Client) PermitSemaphore(name string, opts ...LockOption) (*PermitSemaphore, error) {
	cfg, key, err := c.handleConfig(kindPermitSemaphore, name, opts)
	if err != nil {
		return nil, err
	}
	return &PermitSemaphore{c: c, name: name, key: key, cfg: cfg,
		timeouts: redissonSuffix(key, "timeout"), channel: redissonName("redisson_sc", key)}, nil
}

// permitWire turns a permit id as the API shows it (32 hex digits, Redisson's
// format) into the 16 raw bytes Redisson stores and sends for it, so a permit
// taken by either side can be released by the other. Anything else is
// ErrInvalidArgument, and nothing is sent to Redis.
func permitWire(id string) ([]byte, error) {
	if len(id) != 32 {
		return nil, invalidf("permit id %q: want 32 hex digits", id)
	}
	b, err := hex.DecodeString(id)
	if err != nil {
		return nil, invalidf("permit id %q: want 32 hex digits", id)
	}
	return b, nil
}

// redissonSuffix puts Redisson's suffix on a name: "{name}:suffix", or
// "name:suffix" when the name already carries a hash tag.
func redissonSuffix(name, suffix string) string {
	if strings.Contains(name, "{") {
		return name + ":" + suffix
	}
	return "{" + name + "}:" + suffix
}

// Name returns the semaphore's name.
func (s *PermitSemaphore) Name() string { return s.name }

// fail is the error of operation op on the semaphore.
func (s *PermitSemaphore) fail(op string, err error) error {
	return fmt.Errorf("scriptlock: permit semaphore %q: %s: %w", s.name, op, err)
}

// Key returns the Redis key of the free-permit counter (prefix + name).
func (s *PermitSemaphore) Key() string { return s.key }

// TrySetPermits sets the number of permits, only if none is set yet. It
// reports whether it set them; a call whose reply is lost is made again, and
// an error that remains (a dial error too) says its outcome is unknown, as
// Semaphore.TrySetPermits does.
func (s *PermitSemaphore) TrySetPermits(ctx context.Context, permits int64) (bool, error) {
	if err := s.c.checkHandle(ctx); err != nil {
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

// AddPermits changes the number of permits by n (negative: removes them; the
// count may go negative) and returns the new count of free permits. As
// Redisson's addPermits, a positive n publishes n (the permits added, not the
// new count) on redisson_sc:{name}, waking the waiters; a negative n
// publishes nothing. As Redisson's addPermits (a SET), it drops the
// counter's TTL, if any, and with it that of the held permits' set, which
// an acquisition gives the counter's TTL: the held permits live on with the
// counter, and their releases give them back. A change that would take the count beyond 2^53 - 1
// either way is ErrInvalidArgument and changes nothing. A call whose reply
// is lost is made again and changes the count once; an error that remains,
// a dial error too (rueidis makes the call again on a new connection after
// the one it was sent on broke, and answers that dial's error), leaves the
// outcome unknown and says so: calling again may change the count twice.
func (s *PermitSemaphore) AddPermits(ctx context.Context, n int64) (int64, error) {
	if err := s.c.checkHandle(ctx); err != nil {
		return 0, s.fail("add permits", err)
	}
	if n == 0 || n > maxCount || n < -maxCount {
		return 0, s.fail("add permits", invalidf("permits to add must be non-zero and at most %d either way, got %d", int64(maxCount), n))
	}
	// One record per call: an AddPermits whose reply was lost is made again
	// and changes the count once (callRecorded).
	record := s.c.recordKey("redisson_sc_latch", s.key)
	v, err := s.c.callRecorded(ctx, true, func(ctx context.Context, publish string) (int64, error) {
		return generated.PermitAddPermits(ctx, s.c.rc, s.key, s.timeouts, s.channel, record, n, publish, s.c.recordTTL)
	})
	if err = mayHaveRun(notCount(outOfRange(err)), "the permits may have changed; calling again may change them twice"); err != nil {
		return 0, s.fail(fmt.Sprintf("add %d permits", n), err)
	}
	return v, nil
}

// SetPermits makes n the semaphore's total number of permits, free and
// held, with the effects of Redisson's RPermitExpirableSemaphore.setPermits
// on the same keys: when no count is set it sets n; otherwise the total is
// the free count plus every permit in {name}:timeout whose lease end is 0 or
// later (those whose lease has ended but that no call has returned to the
// pool yet included; one whose lease end wrapped below 0, which State counts
// as held, is not counted, as Redisson's setPermits does not count it), and
// the free count moves by the difference, so it goes negative when more
// than n permits are held (acquirers then wait until enough are released). A change
// publishes n on redisson_sc:{name}, waking the waiters; an unchanged total
// publishes nothing. The counter's TTL, if any, is kept. A negative n, or one
// above 2^53 - 1, is ErrInvalidArgument and nothing is written. A call whose
// reply is lost is made again and sets the total once (it records itself for
// a minute under redisson_sc_latch:{name}:<client-id>:<n>): a change another
// caller made after the first attempt ran survives the repeat. A call held
// up on its way to Redis and reaching it after ctx ended sets nothing. An
// error that remains, a dial error too (as for AddPermits), leaves the
// outcome unknown and says so: setting again may undo what others changed
// since.
func (s *PermitSemaphore) SetPermits(ctx context.Context, n int64) error {
	if err := s.c.checkHandle(ctx); err != nil {
		return s.fail("set permits", err)
	}
	if n < 0 || n > maxCount {
		return s.fail("set permits", invalidf("permits must be between 0 and %d, got %d", int64(maxCount), n))
	}
	// One record per call: a repeat that worked out the total again would
	// undo what others changed since the first attempt. Reserved first, for
	// as long as ctx waits: a call held up on its way and reaching Redis
	// after that would undo what others changed since the caller gave up.
	_, err := s.c.reservedCall(ctx, "redisson_sc_latch", s.key, true, generated.RecordReserve, func(ctx context.Context, record, publish string, slack time.Duration) (int64, error) {
		return generated.PermitSetPermits(ctx, s.c.rc, s.key, s.timeouts, s.channel, record, n, publish, s.c.recordTTL, slack)
	})
	if err = mayHaveRun(notCount(outOfRange(err)), "the permits may have been set; setting them again may undo what others changed since"); err != nil {
		return s.fail(fmt.Sprintf("set %d permits", n), err)
	}
	return nil
}

// Acquire takes a permit with the given lease, waiting until one is free or
// ctx ends, and returns its id. The permit returns to the pool when the lease
// ends unless it is released or extended before. Under the failover guard
// (WithFailoverGuard), a permit taken that no replica acknowledged in time
// is given back, and the error errors.Is ErrNotReplicated.
func (s *PermitSemaphore) Acquire(ctx context.Context, lease time.Duration) (string, error) {
	id, _, err := s.acquire(ctx, lease, -1)
	return id, err
}

// TryAcquire is Acquire that gives up after wait (0: a single attempt). When
// no permit became free in time the error errors.Is ErrNotAcquired, as
// TryLock's does: a *NotAcquiredError, with Unanswered when the server did
// not answer the wait's last attempt, or its subscription to releases (an
// outage, not permits held by others). Mind the order: Acquire's lease first, then wait, as
// Semaphore.TryAcquire(ctx, n, wait) puts its count first; Redisson's
// tryAcquire(waitTime, leaseTime, unit) and Mutex.TryLockWithLease take the
// wait first.
func (s *PermitSemaphore) TryAcquire(ctx context.Context, lease, wait time.Duration) (id string, err error) {
	if wait < 0 {
		return "", s.fail("acquire", invalidf("negative wait %s", wait))
	}
	id, _, err = s.acquire(ctx, lease, wait)
	return id, err
}

func (s *PermitSemaphore) acquire(ctx context.Context, lease, wait time.Duration) (string, bool, error) {
	if s.c.observing(ctx) {
		return observeTake(s.c, ctx, Op{PrimitivePermitSemaphore, s.name}, func(ctx context.Context) (string, bool, error) { return s.acquire(ctx, lease, wait) },
			func(ctx context.Context, id string) error { return s.Release(context.WithoutCancel(ctx), id) })
	}
	if err := s.c.checkHandle(ctx); err != nil {
		return "", false, s.fail("acquire", err)
	}
	if lease < time.Millisecond {
		return "", false, s.fail("acquire", invalidf("permit lease must be at least 1ms, got %s", lease))
	}
	if !s.c.enter() {
		return "", false, s.fail("acquire", ErrClosed)
	}
	defer s.c.leave()
	// The undo of an attempt of unknown outcome marks the record, so that
	// an attempt still on its way to the server takes nothing when it lands.
	id, wire, record := s.newAttempt()
	// unanswered: the last attempt failed without the server's answer, as
	// for a lock (NotAcquiredError.Unanswered); an answer clears it.
	unanswered := true
	var waitUntil time.Time
	if wait > 0 {
		waitUntil = time.Now().Add(wait)
	}
	ok, err := s.c.waitCounted(ctx, s.channel, wait, s.cfg.guardOverrun(), func(actx context.Context) (bool, tryAgain, error) {
		// Bounded by actx (ctx, and the wait's end); a permit a call cut short may still have taken is
		// given back by its id.
		// The repeat after a refused SPUBLISH announces the free permits
		// (rewake): the first attempt may have reclaimed expired ones.
		repeat := false
		guard := s.c.guarded(actx, s.cfg, s.key)
		sent := time.Now()
		acked := true
		res, err := publishing(s.c, func(publish string) (generated.PermitAcquireResult, error) {
			rewake := repeat
			repeat = true
			var res generated.PermitAcquireResult
			var err error
			res, acked, err = s.tryOnce(actx, record, wire, lease, publish, rewake, guard)
			return res, err
		})
		unanswered = err != nil
		if err != nil && unknownOutcome(err) {
			// An attempt whose connection broke under a wait (the node
			// died, went away in a failover, or another call's deadline broke
			// it: foreignDeadline) is undone before the wait
			// goes on, as a lock's is, and the wait goes on under a new id
			// and record (the undo marked this one: its attempts take
			// nothing); otherwise it is undone in the background, and the
			// error ends the call.
			if wait != 0 && (brokenConn(err) || foreignDeadline(actx, err)) {
				ok, refused := s.c.settleWith(ctx, s.cfg.releaseTimeout, waitUntil, func(ctx context.Context) error {
					return s.undoOnce(ctx, wire, record)
				}, func() { s.undoLater(wire, record, lease) })
				if ok {
					id, wire, record = s.newAttempt()
					return false, tryAgain{}, settledError{err}
				}
				if refused != nil {
					err = unsettled(err, refused)
				}
			}
			s.undoLater(wire, record, lease)
		}
		if err != nil {
			return false, tryAgain{}, err
		}
		if res.Status == 1 && guard.on() {
			if o := s.c.cfg.observer; o != nil {
				s.c.reportGuard(o, GuardEvent{Acknowledged: acked, Duration: time.Since(sent)})
			}
			if !acked {
				// No replica has the permit: a failover now would promote
				// one that hands it out again. Give it back, marking the
				// record, in the background should that fail.
				again, err := s.c.unackedWaitError(actx, s.cfg, s.key, guard, wait, s.undoUnacked(wire, record, lease))
				if again {
					// Under a new id and record: the undo marked this one.
					id, wire, record = s.newAttempt()
				}
				return false, tryAgain{}, err
			}
		}
		if res.Status == 1 {
			// Nobody announces this lease ending: the Client's waiters
			// that no release woke may know only of longer ones.
			// (Saturated: the longest lease wrapped to an end in the past.)
			return true, tryAgain{leaseEnd: addSat(lease, time.Millisecond)}, nil
		}
		// Nobody announces a lease running out: wake when the soonest ends
		// (at once while expired permits remain beyond the 1000 a call
		// reclaims: res.Value is 0).
		// (Compared in ms: a Redisson lease of centuries overflows a Duration.)
		next := notifyFallback
		var end time.Duration
		if res.Value >= 0 && res.Value < notifyFallback.Milliseconds() {
			next = time.Duration(res.Value+1) * time.Millisecond
			if res.Value > 0 {
				// The Client's other waiters may know only of a later end
				// (a permit another process took since they last called),
				// and this waiter may give up before it.
				end = next
			}
		}
		// Refused: no permit was free, so the wake, if any, is not passed on.
		return false, tryAgain{sleep: next, leaseEnd: end}, nil
	})
	if errors.Is(err, errSubscribeUnanswered) {
		// Ran out with the subscription unconfirmed: unanswered too.
		err, unanswered = nil, true
	}
	if err != nil {
		return "", false, s.fail("acquire", notCount(err))
	}
	if !ok {
		// The wait ran out (TryAcquire): tell an outage from contention.
		return "", false, &NotAcquiredError{Name: s.name, Unanswered: unanswered,
			msg: fmt.Sprintf("scriptlock: permit semaphore %q: acquire: %s within %s", s.name, ErrNotAcquired, wait)}
	}
	if s.c.closed() {
		// Granted after Close began: the Client can no longer release the
		// permit, so it goes back now, as a lock granted then does.
		s.undo(wire)
		return "", false, s.fail("acquire", ErrClosed)
	}
	return id, true, nil
}

// tryOnce makes one attempt to take a permit (PermitAcquire). With the
// failover guard on, WAIT follows the script on its connection, and acked
// reports whether guard.acks replicas acknowledged it (always true
// unguarded).
func (s *PermitSemaphore) tryOnce(ctx context.Context, record string, wire []byte, lease time.Duration, publish string, rewake bool, guard guardWait) (generated.PermitAcquireResult, bool, error) {
	if !guard.on() {
		res, err := generated.PermitAcquire(ctx, s.c.rc, s.key, s.timeouts, s.channel, record, wire, lease, publish, rewake)
		return res, true, err
	}
	reply, acked, err := s.c.sendGuarded(ctx, guard, func() (rueidis.Completed, error) {
		return generated.PermitAcquireCommand(s.c.rc, s.key, s.timeouts, s.channel, record, wire, lease, publish, rewake)
	})
	if err != nil {
		return generated.PermitAcquireResult{}, false, err
	}
	res, err := generated.DecodePermitAcquire(reply)
	return res, acked, err
}

// undoNow undoes the acquisition recorded under record, which holds the
// permit wire, at once, bounded by the release timeout (undoOnce).
func (s *PermitSemaphore) undoNow(wire []byte, record string) error {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.releaseTimeout)
	defer cancel()
	// Ended at that bound, not cut by a deadline rueidis sees, which closed
	// the connection renewals share (withoutDeadline).
	_, err := callAgain(ctx, func() (struct{}, error) { return struct{}{}, s.undoOnce(withoutDeadline(ctx), wire, record) })
	return err
}

// undoUnacked undoes at once (undoNow) an acquisition no replica
// acknowledged, recorded under record, which holds the permit wire for
// lease; should that fail, in the background (undoLater). A panic of the
// undo (a client wrapper's) goes on on the caller's goroutine once the
// background undo has taken it over, as a Semaphore's does: the permit was
// otherwise held by nobody until its lease ended. It reports whether the
// undo at once succeeded.
func (s *PermitSemaphore) undoUnacked(wire []byte, record string, lease time.Duration) (undone bool) {
	var err error
	goOnAfter(func() { err = s.undoNow(wire, record) }, func() { s.undoLater(wire, record, lease) })
	if err != nil {
		s.undoLater(wire, record, lease)
	}
	return err == nil
}

// newAttempt is a new permit id, its wire form and a new attempt record:
// an acquisition's own, or its next after an undo marked the last record.
func (s *PermitSemaphore) newAttempt() (id string, wire []byte, record string) {
	id = randomID()
	wire, _ = permitWire(id) // randomID is always 32 hex digits
	return id, wire, s.c.recordKey("redisson_sc_latch", s.key)
}

// undo releases the permit wire at once, bounded by the release timeout.
func (s *PermitSemaphore) undo(wire []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.releaseTimeout)
	defer cancel()
	_, _ = s.release(ctx, wire) // as undoNow (release)
}

// release returns the permit wire to the pool as one call recorded under its
// own latch key (callRecorded), so that it can be made again when its reply
// is lost and still answers what it did: the repeat finds the permit gone,
// and without the record would report it unknown.
func (s *PermitSemaphore) release(ctx context.Context, wire []byte) (int64, error) {
	latch := s.c.recordKey("redisson_sc_latch", s.key)
	return s.c.callRecorded(ctx, true, func(ctx context.Context, publish string) (int64, error) {
		// Each call ends with ctx, not by a deadline rueidis sees
		// (withoutDeadline); the retries see ctx's deadline.
		return generated.PermitRelease(withoutDeadline(ctx), s.c.rc, s.key, s.timeouts, s.channel, latch, wire, publish, s.c.recordTTL)
	})
}

// undoLater gives back, in the background, a permit an acquisition of
// unknown outcome may hold (wire: its id as stored; record: the
// acquisition's record), until that succeeds or both the permit's lease and
// the record's life have passed (once more when Close stops it: undoUntil). The undo
// marks the record first, so an attempt that reaches the server after it
// takes nothing: releasing the id alone would find nothing yet, and the
// late attempt would then keep its permit for its whole lease.
func (s *PermitSemaphore) undoLater(wire []byte, record string, lease time.Duration) {
	c := s.c
	undo := func(ctx context.Context) error { return s.undoOnce(ctx, wire, record) }
	// A panic of its calls (a client wrapper's) has no caller to reach.
	started := c.background(logged(c.log, "undoing a permit acquisition of unknown outcome", func() {
		c.undoUntil(time.Now().Add(max(lease, c.recordTTL)), s.cfg.releaseTimeout, undo)
	}))
	if !started {
		// Close began and runs no more background work, but waits for this
		// acquisition: undo here.
		ctx, cancel := context.WithTimeout(context.Background(), min(s.cfg.releaseTimeout, closeUndoMax))
		defer cancel()
		// Bounded though a call waits on a connection being opened (see
		// callBounded).
		_ = c.callBounded(ctx, func(ctx context.Context) error {
			_, err := callAgain(ctx, func() (struct{}, error) { return struct{}{}, undo(ctx) })
			return err
		})
	}
}

// undoOnce makes one attempt to undo the acquisition recorded under record,
// which may hold the permit wire (PermitUndo). When another kind of lock
// has taken the name, the permit cannot go back: the log tells, and the
// undo is over (nil).
func (s *PermitSemaphore) undoOnce(ctx context.Context, wire []byte, record string) error {
	c := s.c
	// Made again at once with PUBLISH when the server refused SPUBLISH
	// (publishing): a settling wait ends on an error reply it gets.
	_, err := publishing(c, func(publish string) (int64, error) {
		return generated.PermitUndo(ctx, c.rc, s.key, s.timeouts, s.channel, record, wire, publish, c.recordTTL)
	})
	if err != nil && errors.Is(notCount(err), ErrWrongKind) {
		// Another kind of lock has taken the name: the permit cannot go
		// back, and trying again changes nothing.
		c.undoOtherKind(s.name, s.key, 1, err)
		return nil
	}
	if errors.Is(err, generated.ErrNoPublish) {
		// Refused before it gave anything back (the release message's
		// channel, or the publish command, is not the ACL user's): the same
		// call made again is refused again, so the undo is over.
		c.log.Warn("semaphore permit not given back: the Client's ACL user may not publish the release message the give-back sends, so nothing was changed; the permit stays taken until its lease, if any, ends: grant the user the channel (or the command) the error names, and release it",
			"semaphore", s.name, "key", s.key, "permit", hex.EncodeToString(wire), "error", err.Error())
		return nil
	}
	return err
}

// Release returns the permit id to the pool and wakes as many waiters as
// permits are then free (on every Client, Redisson's included). It fails
// with ErrUnknownPermit when the semaphore does not hold that permit (wrong
// id, released already, or expired and reclaimed) and with ErrPermitExpired
// when the permit was still there but its lease had ended; both satisfy
// errors.Is(err, ErrNotHeld). An id that is not 32 hex digits is
// ErrInvalidArgument. Release runs detached from ctx, bounded by the release
// timeout. A call whose reply is lost with its connection is made again and
// answers what the first attempt did (it records its outcome for a minute
// under redisson_sc_latch:{name}:<client-id>:<n>), so a dropped connection
// neither fails a release nor leaves the permit held until its lease ends.
// Release works during and after the Client's Close, as long as the rueidis
// client is open.
func (s *PermitSemaphore) Release(ctx context.Context, id string) error {
	if s.c.observing(ctx) {
		return s.c.observeRelease(ctx, Op{PrimitivePermitSemaphore, s.name}, func(ctx context.Context) error { return s.Release(ctx, id) })
	}
	if err := checkCtx(ctx); err != nil {
		return s.fail("release", err)
	}
	wire, err := permitWire(id)
	if err != nil {
		return s.fail("release", err)
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.releaseTimeout)
	defer cancel()
	// Ended at that bound, not by a deadline rueidis sees, which closed the
	// connection renewals share (withoutDeadline).
	st, err := s.release(rctx, wire)
	if err != nil {
		return s.fail("release", notCount(err))
	}
	switch st {
	case 0:
		return s.fail("release "+id, ErrUnknownPermit)
	case 2:
		return s.fail("release "+id, ErrPermitExpired)
	}
	return nil
}

// Extend gives a held permit a new lease counted from now. A permit whose
// lease already ended is returned to the pool and ErrUnknownPermit is
// returned. A new lease that ends before every other held permit's, or
// while another permit's lease has ended and no call has returned it to the
// pool yet, publishes 1 on redisson_sc:{name} (Redisson's updateLeaseTime
// publishes nothing), so that waiters on other clients, which sleep until
// the lease they heard of ends, hear of the sooner one or take the free
// permit. A call whose reply is lost with its connection is made again
// within ctx and lease, at most three times in all, whatever rueidis's
// retries and under the failover guard too, and so is one Redis refused
// having run nothing (LOADING, BUSY, MISCONF, ...), within ctx and lease.
// The attempts share one record (redisson_sc_latch:{name}:<client-id>:<n>,
// for a minute): the first to reach the server sets the lease and the
// others change nothing, so an attempt held up on its way that reaches the
// server after the holder's next Extend leaves that one's lease alone.
// Under the failover guard (WithFailoverGuard), a new lease no replica
// acknowledged in time fails with ErrNotReplicated: the primary has it, but
// a failover may bring back the earlier one, so count on whichever ends
// first.
func (s *PermitSemaphore) Extend(ctx context.Context, id string, lease time.Duration) error {
	if err := s.c.checkHandle(ctx); err != nil {
		return s.fail("extend", err)
	}
	wire, err := permitWire(id)
	if err != nil {
		return s.fail("extend", err)
	}
	if lease < time.Millisecond {
		return s.fail("extend", invalidf("permit lease must be at least 1ms, got %s", lease))
	}
	guard := s.c.guarded(ctx, s.cfg, s.key)
	acked := true
	// A refusal by which Redis ran nothing (LOADING, MISCONF, ...) is made
	// again within ctx, as a Release is, for at most lease: past that, the
	// lease asked for would have ended had the first attempt set it.
	var res generated.PermitExtendResult
	// One record for the call and its repeats: whichever attempt reaches
	// the server first extends the permit, and the others, one held up on
	// its way included, find the record and change nothing.
	record := s.c.recordKey("redisson_sc_latch", s.key)
	rt, until := newRetrier(), time.Now().Add(lease)
	guard.until = until
	repeats := 0
	for {
		res, err = publishingAgain(s.c, func(publish string, rewake bool) (generated.PermitExtendResult, error) {
			var res generated.PermitExtendResult
			var err error
			res, acked, err = s.extendOnce(ctx, record, wire, lease, publish, rewake, guard)
			return res, err
		})
		// One whose connection broke under it (another call's deadline
		// breaking it included: foreignDeadline) is made again within ctx
		// and lease, at most guardedRepeats times in all, as a lock's
		// Extend (a guarded one is by repeatGuarded): the script is not
		// retryable, so that rueidis sends none again past lease. The
		// repeat names the same record: it changes nothing once an attempt
		// extended the permit.
		if err != nil && !guard.on() && (brokenConn(err) || foreignDeadline(ctx, err)) &&
			ctx.Err() == nil && time.Now().Before(until) && repeats < guardedRepeats-1 {
			repeats++
			continue
		}
		if err == nil || !rt.again(ctx, err, until) {
			err = rt.failed(ctx, err)
			break
		}
	}
	if err != nil {
		return s.fail("extend", notCount(err))
	}
	if res.Status != 1 {
		return s.fail("extend "+id, ErrUnknownPermit)
	}
	// The new lease may end sooner than the one the Client's waiters heard
	// of, and nothing announces it.
	s.c.subs.leaseEnds(s.channel, time.Now().Add(addSat(lease, time.Millisecond)))
	if !acked {
		return s.fail("extend "+id, s.c.guardFailed(guard, "a failover may bring back the permit's earlier lease"))
	}
	return nil
}

// extendOnce sets the permit wire's lease (PermitExtend). With the failover
// guard on, WAIT follows the script on its connection, and acked reports
// whether guard.acks replicas acknowledged it (always true unguarded). A
// guarded call whose connection broke under it is made again within ctx and
// guard.until (repeatGuarded), as Extend makes the unguarded one.
func (s *PermitSemaphore) extendOnce(ctx context.Context, record string, wire []byte, lease time.Duration, publish string, rewake bool, guard guardWait) (generated.PermitExtendResult, bool, error) {
	if !guard.on() {
		res, err := generated.PermitExtend(ctx, s.c.rc, s.key, s.timeouts, s.channel, record, wire, lease, publish, rewake, s.c.recordTTL)
		return res, true, err
	}
	var res generated.PermitExtendResult
	acked, err := s.c.repeatGuarded(ctx, guard, func() (rueidis.Completed, error) {
		return generated.PermitExtendCommand(s.c.rc, s.key, s.timeouts, s.channel, record, wire, lease, publish, rewake, s.c.recordTTL)
	}, func(reply rueidis.RedisResult) (err error) {
		res, err = generated.DecodePermitExtend(reply)
		return err
	})
	return res, acked, err
}

// AvailablePermits returns the number of free permits, permits whose lease
// has ended included, after returning those to the pool (up to 1000 a call;
// any beyond are counted as free as State counts them, and later calls
// return them). More than 2^53 - 1 (a count another client grew) reads as
// 2^53 - 1.
func (s *PermitSemaphore) AvailablePermits(ctx context.Context) (int64, error) {
	if err := s.c.checkHandle(ctx); err != nil {
		return 0, s.fail("available permits", err)
	}
	v, err := publishingAgain(s.c, func(publish string, rewake bool) (int64, error) {
		return generated.PermitAvailable(ctx, s.c.rc, s.key, s.timeouts, s.channel, publish, rewake)
	})
	if err != nil {
		return 0, s.fail("available permits", notCount(err))
	}
	return v, nil
}

// Delete removes the semaphore, its free-permit count and every permit held,
// as Redisson's RPermitExpirableSemaphore.delete does, and reports whether
// there was anything to delete. A permit held before Delete can no longer be
// released or extended (ErrUnknownPermit); waiters keep waiting until permits
// are set again. The records of releases (redisson_sc_latch:{name}:...) are
// not listed anywhere to delete; they expire within a minute. Delete leaves
// such a record of its own answer: made again after its reply was lost, it
// answers as the first attempt did and deletes nothing, so permits set since
// survive. An error that remains, a dial error too (as for AddPermits),
// leaves the outcome unknown and says so.
// A name another kind of lock holds is ErrWrongKind, and the lock is left
// alone.
func (s *PermitSemaphore) Delete(ctx context.Context) (bool, error) {
	if err := s.c.checkHandle(ctx); err != nil {
		return false, s.fail("delete", err)
	}
	ok, err := s.c.deleteRecorded(ctx, "redisson_sc_latch", s.key, func(ctx context.Context, record, _ string, slack time.Duration) (bool, error) {
		return generated.PermitDelete(ctx, s.c.rc, s.key, s.timeouts, record, s.c.recordTTL, slack)
	})
	if err != nil {
		return false, s.fail("delete", mayHaveRun(notCount(err), "the semaphore may have been deleted; deleting again may delete permits set since"))
	}
	return ok, nil
}

// PermitState is a snapshot of a PermitSemaphore, read in one round trip.
type PermitState struct {
	// Available is the number of permits free now, counting permits whose
	// lease has ended (the next call returns them to the pool); more than
	// 2^53 - 1 (a count another client grew) reads as 2^53 - 1.
	Available int64
	// Held is the number of permits held under a lease that has not ended
	// (one whose end is below 0, which no client reclaims, included).
	Held int64
}

// State reads the free and the held permits without changing anything
// (AvailablePermits also returns expired permits to the pool). Leases are
// judged by the server's clock.
func (s *PermitSemaphore) State(ctx context.Context) (PermitState, error) {
	if err := s.c.checkHandle(ctx); err != nil {
		return PermitState{}, s.fail("state", err)
	}
	st, err := generated.PermitState(ctx, s.c.rc, s.key, s.timeouts)
	if err != nil {
		return PermitState{}, s.fail("state", notCount(err))
	}
	return PermitState{Available: st.Available, Held: st.Held}, nil
}
