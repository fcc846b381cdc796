package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
)

// LeanMutex is a non-reentrant distributed lock in the plain SET NX form:
// the lock is a string key whose value is the owner (<client-id>:<owner-id>),
// taken with one SET key owner NX PX lease and released with one
// compare-and-delete script, so an uncontended Lock+Unlock costs the server
// what the bare pattern costs. It keeps the engine's lifecycle: every call
// bounded by ctx, an acquisition of unknown outcome undone by owner, an
// explicit lease or watchdog renewal, a lock context that ends before the
// lease can run out, release retry, the failover guard, Close and Observer
// events.
//
// What it leaves out, compared with Mutex:
//   - re-entry: a second Lock by the owner holding it fails at once with
//     ErrNotReentrant (waiting would never end);
//   - Redisson's layout: the key is a string, not Redisson's hash, so Java
//     services cannot share the lock; a LeanMutex and a Mutex (or FairMutex,
//     RWMutex, Redisson lock) on one name refuse each other with
//     ErrWrongKind instead of excluding each other, as do a LeanMutex and
//     a Semaphore or CountDownLatch;
//   - notified waiting: a waiter polls with a doubling, jittered delay (1 ms
//     up to 16 ms, never past its deadline), like Redisson's RSpinLock, so no
//     pub/sub connection is used and a release publishes nothing;
//   - fencing tokens, unless asked for: with WithFencing every acquisition
//     draws a token (Fence) from the counter a Mutex of the name would use,
//     at the cost of a script (SET plus INCR) instead of the plain SET.
//     Without it, only a hold whose owner comes from the context
//     (WithOwner) draws one, kept to check its release (see WithOwner),
//     not handed out.
//
// Owners work as for Mutex: the owner is the one in ctx, or a fresh one per
// Lock call, so goroutines sharing a handle exclude each other.
type LeanMutex struct {
	lockSpec
}

// Polling bounds: waiters start at leanPollMin and double up to leanPollMax,
// the same schedule as the bare SET NX pattern, so a hand-off is noticed
// within a few milliseconds while a long hold costs each waiter at most about
// 60 calls a second.
const (
	leanPollMin = time.Millisecond
	leanPollMax = 16 * time.Millisecond
)

// LeanMutex returns a handle for the lean lock called name. opts override the
// Client's settings (lease, watchdog, failover guard, release timeout) for
// this handle; WithFencing adds fencing tokens. An invalid name or option is
// an error here (errors.Is ErrInvalidName or ErrInvalidArgument).
func (c *Client) LeanMutex(name string, opts ...LockOption) (*LeanMutex, error) {
	cfg, err := c.handleOptions(kindLeanMutex, opts)
	var key, fence string
	if err == nil {
		if cfg.leanFence {
			// The counter's name and the key in one allocation.
			var ns [1]string
			key, err = lockNames(ns[:], cfg.prefix, name, "redisson_lock_token")
			fence = ns[0]
		} else {
			key, err = lockKey(cfg.prefix, name)
		}
	}
	if err != nil {
		return nil, handleError(kindLeanMutex, name, err)
	}
	return &LeanMutex{lockSpec{c: c, name: name, key: key, cfg: cfg, fence: fence}}, nil
}

var _ Locker = (*LeanMutex)(nil)

// Name returns the lock's name.
func (l *LeanMutex) Name() string { return l.name }

// Key returns the Redis key of the lock (prefix + name).
func (l *LeanMutex) Key() string { return l.key }

// Lock waits until the lock is acquired or ctx ends. Without an explicit
// lease (WithLease) the watchdog keeps renewing it until Unlock. The returned
// context is cancelled with cause ErrLockLost if the lock is lost and carries
// the owner id.
func (l *LeanMutex) Lock(ctx context.Context) (context.Context, error) {
	return l.acquire(ctx, -1, l.cfg.lease)
}

// TryLock is Lock that gives up after wait; wait 0 makes one attempt. When it
// gives up, the error is a *NotAcquiredError (errors.Is ErrNotAcquired) with
// the holder's remaining lease, read with one PTTL as it gives up.
func (l *LeanMutex) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	if wait < 0 {
		return nil, opError("lock", l.name, invalidf("negative wait %s", wait))
	}
	return l.acquire(ctx, wait, l.cfg.lease)
}

// LockWithLease is Lock with a lease that expires on its own: no watchdog.
func (l *LeanMutex) LockWithLease(ctx context.Context, lease time.Duration) (context.Context, error) {
	if err := checkLease(lease); err != nil {
		return nil, opError("lock", l.name, err)
	}
	return l.acquire(ctx, -1, lease)
}

// TryLockWithLease is TryLock with a lease that expires on its own.
func (l *LeanMutex) TryLockWithLease(ctx context.Context, wait, lease time.Duration) (context.Context, error) {
	if wait < 0 {
		return nil, opError("lock", l.name, invalidf("negative wait %s", wait))
	}
	if err := checkLease(lease); err != nil {
		return nil, opError("lock", l.name, err)
	}
	return l.acquire(ctx, wait, lease)
}

func (l *LeanMutex) acquire(ctx context.Context, wait, lease time.Duration) (context.Context, error) {
	if ctx == nil {
		return nil, opError("lock", l.name, invalidf("nil context"))
	}
	return l.c.acquire(ctx, l, wait, lease)
}

// Unlock releases the lock held by the owner in ctx. It runs detached from
// ctx (bounded by the release timeout), so a cancelled request still releases
// its lock. A non-owner, or an owner whose lock expired, gets ErrNotHeld and
// nothing changes. When the release fails, the hold is dropped here (its
// context ends with ErrLockLost) and the lock ends with its lease on the
// server.
func (l *LeanMutex) Unlock(ctx context.Context) error {
	return l.c.unlock(ctx, l)
}

// ForceUnlock deletes the lock whoever holds it. It reports whether there was
// a lock to delete; a key of another lock kind is left alone (ErrWrongKind).
// A hold this Client had of it ends at once, as for Mutex.ForceUnlock.
func (l *LeanMutex) ForceUnlock(ctx context.Context) (bool, error) {
	if err := l.check(ctx); err != nil {
		return false, opError("force unlock", l.name, err)
	}
	ok, err := l.c.forceUnlock(ctx, l.key, sidesOf(sideLean), func(ctx context.Context, record, _ string, slack time.Duration) (bool, error) {
		return generated.LeanForceUnlock(ctx, l.c.rc, l.key, record, l.c.recordTTL, slack)
	})
	if err != nil {
		return false, opError("force unlock", l.name, wrongKind(err))
	}
	return ok, nil
}

// Extend sets the remaining lease of the explicit-lease hold lctx names, as
// Mutex.Extend.
func (l *LeanMutex) Extend(ctx, lctx context.Context, lease time.Duration) error {
	return l.c.extend(ctx, lctx, l, lease)
}

// State reads whether the lock is held, whether the owner in ctx holds it
// (HoldCount 1, else 0) and the remaining lease, in one round trip.
func (l *LeanMutex) State(ctx context.Context) (LockState, error) {
	if err := l.check(ctx); err != nil {
		return LockState{}, opError("state of", l.name, err)
	}
	owner, _ := OwnerFrom(ctx)
	st, err := generated.LeanState(ctx, l.c.rc, l.key, l.c.fieldOf(l, owner))
	if err != nil {
		return LockState{}, opError("state of", l.name, wrongKind(err))
	}
	out := LockState{Locked: st.Owners > 0, HoldCount: st.Holds}
	if out.Locked {
		out.Lease = msDuration(st.TTL)
	}
	return out, nil
}

// IsLocked reports whether anyone holds the lock (State(ctx).Locked).
func (l *LeanMutex) IsLocked(ctx context.Context) (bool, error) {
	st, err := l.State(ctx)
	return st.Locked, err
}

// The engine's side of LeanMutex.

func (l *LeanMutex) spec() *lockSpec     { return &l.lockSpec }
func (l *LeanMutex) side() side          { return sideLean }
func (l *LeanMutex) fieldSuffix() string { return "" }

// waitChannel: none, the engine polls (leanPollMin..leanPollMax).
func (l *LeanMutex) waitChannel(string) waitSpec { return waitSpec{} }

// setCommand is SET key owner NX GET PX lease: GET (Redis 7.0+) answers the
// holder's value on a refusal in the same round trip, which tells a re-entry
// by the holder from contention, and fails with WRONGTYPE on a key of
// another lock kind instead of reporting it as held.
func (l *LeanMutex) setCommand(field string, lease time.Duration) rueidis.Completed {
	// SET key owner NX GET PX lease, with the lease's text kept (pxText):
	// the builder's PxMilliseconds formats it again on every Lock.
	return l.c.rc.B().Arbitrary("SET").Keys(l.key).Args(field, "NX", "GET", "PX", l.c.pxText(lease.Milliseconds())).Build()
}

// msText is the text of a number of milliseconds.
type msText struct {
	ms int64
	s  string
}

// pxText is the text of a SET PX argument of ms milliseconds. The last one
// sent is kept: a program's LeanMutex Locks mostly send one lease (the
// watchdog's), which is formatted once.
func (c *Client) pxText(ms int64) string {
	if t := c.leanPX.Load(); t != nil && t.ms == ms {
		return t.s
	}
	t := &msText{ms: ms, s: strconv.FormatInt(ms, 10)}
	c.leanPX.Store(t)
	return t.s
}

func (l *LeanMutex) tryAcquire(ctx context.Context, field string, serverLease, _ time.Duration, guard guardWait, wa waitAttempt) (attempt, bool, error) {
	if l.fence != "" || wa.shared {
		// A shared owner's hold draws a token even without WithFencing: its
		// value is the owner's alone, and the token is what lets a late
		// release of an earlier hold of the owner spare this one.
		return l.tryAcquireFenced(ctx, field, serverLease, guard)
	}
	var reply rueidis.RedisResult
	acked := true
	if guard.on() {
		var err error
		reply, acked, err = l.c.sendGuarded(ctx, guard, func() (rueidis.Completed, error) {
			return l.setCommand(field, serverLease), nil
		})
		if err != nil {
			return attempt{}, false, err
		}
	} else {
		reply = l.c.rc.Do(ctx, l.setCommand(field, serverLease))
	}
	holder, err := reply.ToString()
	switch {
	case rueidis.IsRedisNil(err):
		return attempt{granted: true, fresh: true}, acked, nil
	case err != nil:
		return attempt{}, false, err
	case holder != field && strings.IndexByte(holder, ':') < 0:
		// A count (Semaphore, CountDownLatch) or another program's
		// value, not an owner: SET NX changed nothing.
		return attempt{}, false, fmt.Errorf("%w: %w", ErrWrongKind, generated.ErrNotLean)
	case holder != field:
		return attempt{}, acked, nil
	}
	a, err := l.heldByOwner(field)
	return a, acked, err
}

// fenceKey is the token counter: the one WithFencing named, or the same name
// for a shared owner's hold of an unfenced lock.
func (l *LeanMutex) fenceKey() string {
	if l.fence != "" {
		return l.fence
	}
	return redissonName("redisson_lock_token", l.key)
}

// tryAcquireFenced is tryAcquire with a fencing token (WithFencing, or a
// shared owner).
func (l *LeanMutex) tryAcquireFenced(ctx context.Context, field string, serverLease time.Duration, guard guardWait) (attempt, bool, error) {
	fence := l.fenceKey()
	var res int64
	var err error
	acked := true
	if guard.on() {
		var reply rueidis.RedisResult
		reply, acked, err = l.c.sendGuarded(ctx, guard, func() (rueidis.Completed, error) {
			return generated.LeanAcquireFencedCommand(l.c.rc, l.key, fence, field, serverLease, l.cfg.fenceIdle)
		})
		if err == nil {
			res, err = generated.DecodeLeanAcquireFenced(reply)
		}
	} else {
		res, err = generated.LeanAcquireFenced(ctx, l.c.rc, l.key, fence, field, serverLease, l.cfg.fenceIdle)
	}
	switch {
	case err != nil:
		return attempt{}, false, err
	case res > 0:
		return attempt{granted: true, fresh: true, token: res}, acked, nil
	case res == -1:
		return attempt{}, acked, nil
	}
	a, err := l.heldByOwner(field)
	return a, acked, err
}

// heldByOwner decides an attempt that found the lock held by the caller's
// own owner: a re-entry when this Client knows of the hold (refused: a
// LeanMutex does not count holds), else a grant whose reply was lost, which
// the engine gives back (errOrphan) before trying again.
func (l *LeanMutex) heldByOwner(field string) (attempt, error) {
	l.c.mu.Lock()
	known := l.c.holds[holdID(l.key, field)] != nil
	l.c.mu.Unlock()
	if known {
		return attempt{}, fmt.Errorf("%w: the owner in the context already holds it", ErrNotReentrant)
	}
	return attempt{granted: true}, nil
}

func (l *LeanMutex) releaseOnce(ctx context.Context, field string, r releaseCall) (releaseStatus, time.Duration, error) {
	var ok bool
	var err error
	switch {
	case r.token > 0:
		ok, err = generated.LeanReleaseShared(ctx, l.c.rc, l.key, l.fenceKey(), field, r.token)
	case r.token < 0:
		// A background undo of a hold that drew no token (see leanMark):
		// the counter as it stood when the undo was decided, 0 for none. A
		// hold of the owner made since drew a token and moved it.
		ok, err = generated.LeanReleaseShared(ctx, l.c.rc, l.key, l.fenceKey(), field, -r.token-1)
	default:
		ok, err = generated.LeanRelease(ctx, l.c.rc, l.key, field)
	}
	switch {
	case err != nil:
		return notHeld, 0, err
	case ok:
		return freed, 0, nil
	case r.retry && r.vouched:
		// An earlier attempt's reply was lost. The hold was live when the
		// release began, so its lease cannot have run out on the server
		// since: the earlier attempt deleted the key.
		return freed, 0, nil
	}
	return notHeld, 0, nil
}

// leanMark is what the background undo of an unfenced hold that drew no
// token names, in place of the token (see LeanMutex.undoMark).
// leanMarkUnread: not read yet.
const leanMarkUnread = math.MinInt64

// undoMark reads the token counter for the background undo of the owner's
// ended hold, which drew no token, and returns it as that undo's releases
// name it: -(counter+1), -1 for none. The owner may lock again under the
// same field (its id read from the ended hold's context), and the server
// grant it before this Client registers it, where the undo would take it for
// the ended hold; such a hold is a shared owner's, which draws a token, so a
// release naming the counter as it stood before it was sent refuses it.
// Acquisitions of the owner are held back while the counter is read, so
// none is sent before a value read with it in flight.
func (l *LeanMutex) undoMark(ctx context.Context, field string) (int64, error) {
	c := l.c
	id := holdID(l.key, field)
	for {
		c.awaitAcquiring(ctx, id, false)
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		c.mu.Lock()
		// Once Close has begun, no acquisition starts.
		if c.inFlightLocked(id) <= 0 || c.closing {
			if c.marking == nil {
				c.marking = map[holdKey]int{}
			}
			c.marking[id]++
			c.mu.Unlock()
			break
		}
		c.mu.Unlock()
	}
	defer func() {
		c.mu.Lock()
		if c.marking[id]--; c.marking[id] <= 0 {
			delete(c.marking, id)
		}
		c.acquired.Broadcast()
		c.mu.Unlock()
	}()
	fence := l.fenceKey()
	return readPrimaryAs(ctx, c, func() (rueidis.Completed, error) {
		return c.rc.B().Get().Key(fence).Build(), nil
	}, func(r rueidis.RedisResult) (int64, error) {
		n, err := r.AsInt64()
		switch {
		case rueidis.IsRedisNil(err):
			return -1, nil
		case err != nil:
			return 0, err
		}
		return -n - 1, nil
	})
}

func (l *LeanMutex) holdsOf(ctx context.Context, field string) (int64, error) {
	// From the primary, as every undo decides on it (readPrimary).
	st, err := readPrimaryAs(ctx, l.c, func() (rueidis.Completed, error) {
		return generated.LeanStateCommand(l.c.rc, l.key, field)
	}, generated.DecodeLeanState)
	return st.Holds, err
}

func (l *LeanMutex) abandon(context.Context, string, time.Duration, int64) {}

// holderLeaser is a primitive whose refused attempts do not tell the
// holder's remaining lease, which the NotAcquiredError of a wait that gives
// up reads with holderLease.
type holderLeaser interface {
	holderLease(ctx context.Context) time.Duration
}

// holderLease reads the remaining lease of the lock's holder for the
// NotAcquiredError of a TryLock that gives up: SET NX GET answers the holder
// but not its lease. One PTTL, bounded by ctx and by waitOverrun (a server
// that stopped answering keeps the caller no longer than an attempt cut off
// by its wait's end); 0 when unknown: no answer in time, the lock free by
// now, or held without expiry. Not for a MultiLock's member, whose
// refusals the MultiLock tells without their lease.
func (l *LeanMutex) holderLease(ctx context.Context) time.Duration {
	if ctx.Err() != nil || ctx.Value(multiMemberKey{}) != nil {
		return 0
	}
	rctx, cancel := context.WithTimeout(ctx, waitOverrun)
	defer cancel()
	// Ended at that bound, not cut by a deadline rueidis sees: one that
	// passed closed the connection renewals share, on a link slower than
	// the bound (withoutDeadline).
	ms, err := l.c.rc.Do(withoutDeadline(rctx), l.c.rc.B().Pttl().Key(l.key).Build()).AsInt64()
	if err != nil || ms <= 0 {
		return 0
	}
	return msDuration(ms)
}

func (l *LeanMutex) extendOnce(ctx context.Context, field string, lease time.Duration, token int64, guard guardWait) (bool, bool, error) {
	if guard.on() {
		return l.c.callGuarded(ctx, guard, func() (rueidis.Completed, error) {
			return generated.LeanRenewCommand(l.c.rc, l.key, l.fenceKey(), lease, field, token)
		}, generated.DecodeLeanRenew)
	}
	held, err := generated.LeanRenew(ctx, l.c.rc, l.key, l.fenceKey(), lease, field, token)
	return held, true, err
}

// leanRenewal renews lean holds (LeanRenew).
var leanRenewal = &renewKind{command: func(rc rueidis.Client, h *hold) (rueidis.Completed, error) {
	return generated.LeanRenewCommand(rc, h.key, h.prim.(interface{ fenceKey() string }).fenceKey(), h.lease, h.field, h.renewToken())
}, decode: generated.DecodeLeanRenew}

// waitPolling runs try until it succeeds, sleeping a doubling, half-random
// delay from leanPollMin to leanPollMax between attempts, until wait (< 0: no
// limit) or ctx runs out. It reports false when the wait ran out. try's
// calls are bounded by the context it is given, as waitOn's.
func (c *Client) waitPolling(ctx context.Context, wait, overrun time.Duration, try func(actx context.Context) (bool, time.Duration, error)) (bool, error) {
	var deadline time.Time
	if wait > 0 {
		deadline = time.Now().Add(wait)
	}
	actx, cancelAttempts := attemptContext(ctx, wait, deadline, overrun)
	defer cancelAttempts()
	st := c.statsFrom(ctx)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	delay := leanPollMin
	rt := newRetrier()
	var cut attemptCut
	defer cut.end()
	for {
		if err := ctx.Err(); err != nil {
			// With the refusal that was to be made again, if there was one.
			return false, fmt.Errorf("wait ended: %w", rt.failed(ctx, err))
		}
		if c.closingCtx.Err() != nil {
			return false, ErrClosed
		}
		// Cut off by Close as a notified wait's attempts are (attemptCut).
		done, _, err := try(cut.next(c, actx))
		if wait != 0 && rt.again(ctx, err, deadline) {
			continue
		}
		if st != nil {
			st.attempts++
		}
		if cutByWait(ctx, actx, err) {
			return false, nil // try undoes what the attempt may have done
		}
		if err != nil {
			return false, c.attemptFailed(ctx, &rt, err)
		}
		if done {
			return true, nil
		}
		rt.answered()
		if wait == 0 || (wait > 0 && !time.Now().Before(deadline)) {
			return false, nil
		}
		sleep := delay/2 + rand.N(delay/2+1)
		delay = min(2*delay, leanPollMax)
		sleep, capped := capSleep(sleep, wait, deadline)
		if timer == nil {
			timer = time.NewTimer(sleep)
		} else {
			timer.Reset(sleep)
		}
		select {
		case <-timer.C:
			if st != nil && !capped {
				st.timers++
			}
		case <-ctx.Done():
			return false, fmt.Errorf("wait ended: %w", ctx.Err())
		case <-c.closingCtx.Done():
			return false, ErrClosed
		}
	}
}

// await waits for p: polling when p has no release channel, else notified.
func (c *Client) await(ctx context.Context, ws waitSpec, wait time.Duration, try func(actx context.Context, since int64, polite bool) (bool, tryAgain, error)) (bool, error) {
	if ws.channel == "" {
		return c.waitPolling(ctx, wait, ws.overrun, func(actx context.Context) (bool, time.Duration, error) {
			ok, next, err := try(actx, 0, false)
			return ok, next.sleep, err
		})
	}
	return c.waitOn(ctx, ws, wait, try)
}

// badFence marks an acquisition refused for its fencing-token counter, from
// which no token can be drawn (the scripts' BAD_FENCE).
func badFence(err error) error {
	if errors.Is(err, generated.ErrBadFence) && !errors.Is(err, ErrFenceCounter) {
		return fmt.Errorf("%w: %w", ErrFenceCounter, err)
	}
	return err
}

// wrongKind marks a WRONGTYPE reply: the lock's key holds another kind of
// lock (a LeanMutex's string where a hash was expected, or the reverse), a
// count, or another program's value of another type, and
// the refusals of a read-write lock's hash by a Mutex and the reverse.
func wrongKind(err error) error {
	if err == nil {
		return nil // before errors.As's target, which escapes: no allocation on success
	}
	if (errors.Is(err, generated.ErrNotRw) || errors.Is(err, generated.ErrNotMutex) || errors.Is(err, generated.ErrNotLean)) && !errors.Is(err, ErrWrongKind) {
		// A read-write lock and a Mutex, FairMutex or Redisson RLock share
		// the name: both are hashes, told apart by the mode field. Or a
		// LeanMutex's string holds no owner (a Semaphore's or
		// CountDownLatch's count, another program's value).
		return fmt.Errorf("%w: %w", ErrWrongKind, err)
	}
	// errors.As: the Redis error may come wrapped ("wait ended: ...").
	if re := (*rueidis.RedisError)(nil); errors.As(err, &re) && re != nil && strings.HasPrefix(re.Error(), "WRONGTYPE") && !errors.Is(err, ErrWrongKind) {
		// Which program wrote the key is not known: a lock of another
		// kind, a Semaphore or CountDownLatch, or another program.
		return fmt.Errorf("%w (the key is of another Redis type than this lock's: a lock of another kind, a Semaphore's or CountDownLatch's count, or another program's key): %w", ErrWrongKind, err)
	}
	return err
}
