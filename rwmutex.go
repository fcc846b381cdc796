package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
)

// ErrUpgrade: a write lock was requested by an owner that holds a read lock
// of the same RWMutex. The write lock would wait for the owner's own read
// lock forever, so the request fails at once; release the read lock first.
var ErrUpgrade = errors.New("write lock requested while holding a read lock")

// RWMutex is a distributed reader-writer lock with Redisson's RReadWriteLock
// layout: many readers or one writer. Reads and writes are reentrant per
// owner, and the write holder may also take read locks (its writes then
// downgrade to reads on Unlock). Holds are renewed by the watchdog and
// carry a lock-loss context as for Mutex; write acquisitions carry fencing
// tokens.
//
// Writers do not starve: a writer that has to wait registers itself as
// pending, and from then on new readers wait too (owners that already read
// may still re-enter). The registration carries a server-clock deadline the
// writer pushes back while it waits, so a writer that dies holds readers back
// for at most the waiter timeout (WithWaiterTimeout). With a steady stream of
// writers, readers can wait for a long time: the preference is for writers.
//
// Layout: the hash <name> with field mode (read|write), field
// <client-id>:<owner-id> -> read holds and <client-id>:<owner-id>:write ->
// write holds; one lease key per read hold, {<name>}:<client-id>:<owner-id>:
// rwlock_timeout:<n>; channel redisson_rwlock:{<name>} with "0" for unlocked
// and "1" for readers may enter. The pending-writer set
// redisson_rwlock_writers:{<name>} is ours (Redisson has no writer
// preference); Redisson readers on the same lock do not see it.
//
// Lock, TryLock and Unlock are the write side, so an *RWMutex is a Locker;
// RLocker returns the read side as a Locker.
type RWMutex struct {
	lockSpec
	writers       string
	prefix        string // of every lease key: {<key>} (or <key> with a hash tag)
	waiterTimeout time.Duration
	read, write   rwSide
}

// rwSide is one side of an RWMutex as the engine sees it.
type rwSide struct {
	rw    *RWMutex
	write bool
}

// RWMutex returns a handle for the reader-writer lock called name. opts
// override the Client's settings for this handle, as for Mutex;
// WithWaiterTimeout bounds how long a dead pending writer holds readers back.
// The failover guard (WithFailoverGuard) applies to both sides. An invalid
// name or option is an error here.
func (c *Client) RWMutex(name string, opts ...LockOption) (*RWMutex, error) {
	var ns [2]string
	s, err := newSpecWith(c, kindRWMutex, name, opts, "", ns[:], "redisson_rwlock", "redisson_rwlock_writers")
	if err != nil {
		return nil, err
	}
	rw := &RWMutex{lockSpec: s}
	rw.waiterTimeout = rw.cfg.waiterTTL()
	rw.read, rw.write = rwSide{rw, false}, rwSide{rw, true}
	rw.channel, rw.writers = ns[0], ns[1]
	// rwPrefix(key), which the channel's name ends with: no allocation.
	rw.prefix = rw.channel[len("redisson_rwlock:"):]
	return rw, nil
}

// rwPrefix is Redisson's prefix for names derived from a lock key: the key in
// braces, or the key as is when it already has a hash tag.
func rwPrefix(key string) string {
	if strings.Contains(key, "{") {
		return key
	}
	return "{" + key + "}"
}

// rwTimeouts is the prefix of one owner's read-hold lease keys.
func rwTimeouts(key, field string) string {
	return rwPrefix(key) + ":" + field + ":rwlock_timeout"
}

var _ Locker = (*RWMutex)(nil)

// Name returns the lock's name.
func (rw *RWMutex) Name() string { return rw.name }

// Key returns the Redis key of the lock hash (prefix + name).
func (rw *RWMutex) Key() string { return rw.key }

// Lock waits until the write lock is acquired or ctx ends. Without an
// explicit lease the watchdog renews it until Unlock. It fails at once with
// ErrUpgrade if the owner holds a read lock.
func (rw *RWMutex) Lock(ctx context.Context) (context.Context, error) {
	return rw.acquire(ctx, true, -1, rw.cfg.lease)
}

// TryLock is Lock that gives up after wait; wait 0 makes one attempt.
func (rw *RWMutex) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	if wait < 0 {
		return nil, opError("lock", rw.name, invalidf("negative wait %s", wait))
	}
	return rw.acquire(ctx, true, wait, rw.cfg.lease)
}

// LockWithLease is Lock with a lease that expires on its own.
func (rw *RWMutex) LockWithLease(ctx context.Context, lease time.Duration) (context.Context, error) {
	if err := checkLease(lease); err != nil {
		return nil, opError("lock", rw.name, err)
	}
	return rw.acquire(ctx, true, -1, lease)
}

// TryLockWithLease is TryLock with a lease that expires on its own.
func (rw *RWMutex) TryLockWithLease(ctx context.Context, wait, lease time.Duration) (context.Context, error) {
	if wait < 0 {
		return nil, opError("lock", rw.name, invalidf("negative wait %s", wait))
	}
	if err := checkLease(lease); err != nil {
		return nil, opError("lock", rw.name, err)
	}
	return rw.acquire(ctx, true, wait, lease)
}

// Unlock releases one write hold of the owner in ctx, detached from ctx.
func (rw *RWMutex) Unlock(ctx context.Context) error { return rw.c.unlock(ctx, &rw.write) }

// RLock waits until a read lock is acquired or ctx ends.
func (rw *RWMutex) RLock(ctx context.Context) (context.Context, error) {
	return rw.acquire(ctx, false, -1, rw.cfg.lease)
}

// TryRLock is RLock that gives up after wait; wait 0 makes one attempt.
func (rw *RWMutex) TryRLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	if wait < 0 {
		return nil, opError("lock", rw.name, invalidf("negative wait %s", wait))
	}
	return rw.acquire(ctx, false, wait, rw.cfg.lease)
}

// RLockWithLease is RLock with a lease that expires on its own.
func (rw *RWMutex) RLockWithLease(ctx context.Context, lease time.Duration) (context.Context, error) {
	if err := checkLease(lease); err != nil {
		return nil, opError("lock", rw.name, err)
	}
	return rw.acquire(ctx, false, -1, lease)
}

// TryRLockWithLease is TryRLock with a lease that expires on its own.
func (rw *RWMutex) TryRLockWithLease(ctx context.Context, wait, lease time.Duration) (context.Context, error) {
	if wait < 0 {
		return nil, opError("lock", rw.name, invalidf("negative wait %s", wait))
	}
	if err := checkLease(lease); err != nil {
		return nil, opError("lock", rw.name, err)
	}
	return rw.acquire(ctx, false, wait, lease)
}

// RUnlock releases one read hold of the owner in ctx, detached from ctx.
func (rw *RWMutex) RUnlock(ctx context.Context) error { return rw.c.unlock(ctx, &rw.read) }

// RLocker returns the read side as a Locker (Lock = RLock, Unlock = RUnlock).
func (rw *RWMutex) RLocker() Locker { return readLocker{rw} }

type readLocker struct{ rw *RWMutex }

func (r readLocker) Name() string { return r.rw.name }
func (r readLocker) Lock(ctx context.Context) (context.Context, error) {
	return r.rw.RLock(ctx)
}
func (r readLocker) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	return r.rw.TryRLock(ctx, wait)
}
func (r readLocker) Unlock(ctx context.Context) error { return r.rw.RUnlock(ctx) }

// rwReadRenewal renews read holds: the owner's lease keys and the hash.
var rwReadRenewal = &renewKind{command: func(rc rueidis.Client, h *hold) (rueidis.Completed, error) {
	return generated.RwReadRenewCommand(rc, h.key, rwTimeouts(h.key, h.field), h.lease, h.field, h.renewToken())
}, decode: generated.DecodeRwReadRenew}

// rwWriteRenewal renews write holds: the lock's expiry, kept at least as
// long as the writer's own read holds. Renewals announce nothing (announce
// false: their publish command is never run).
var rwWriteRenewal = &renewKind{command: func(rc rueidis.Client, h *hold) (rueidis.Completed, error) {
	reader := strings.TrimSuffix(h.field, ":write")
	return generated.RwWriteRenewCommand(rc, h.key, rwTimeouts(h.key, reader), h.prim.spec().fence, h.prim.spec().channel, h.lease, h.field, reader, h.renewToken(), "publish", false, false)
}, decode: generated.DecodeRwWriteRenew}

func (rw *RWMutex) acquire(ctx context.Context, write bool, wait, lease time.Duration) (context.Context, error) {
	if ctx == nil {
		return nil, opError("lock", rw.name, invalidf("nil context"))
	}
	side := &rw.read
	if write {
		side = &rw.write
	}
	return rw.c.acquire(ctx, side, wait, lease)
}

func (s *rwSide) spec() *lockSpec { return &s.rw.lockSpec }

func (s *rwSide) side() side {
	if s.write {
		return sideWrite
	}
	return sideRead
}

// fieldSuffix: a reader's field is the owner's; a writer's is <owner>:write.
func (s *rwSide) fieldSuffix() string {
	if s.write {
		return ":write"
	}
	return ""
}

// checkOwner refuses an owner id ending in ":write": its reader field
// (<client-id>:<owner>) would be the writer field of the owner without that
// ending (<client-id>:<owner>:write), so its RUnlock would release that
// owner's write lock.
func (s *rwSide) checkOwner(owner string) error { return rwOwnerOK(owner) }

func rwOwnerOK(owner string) error {
	if strings.HasSuffix(owner, ":write") {
		return invalidf("an RWMutex owner id may not end in \":write\" (%q): its read hold would be the write hold of owner %q", owner, strings.TrimSuffix(owner, ":write"))
	}
	return nil
}

// waitChannel: every message wakes every local waiter of the lock, as a read
// release can let several readers in at once.
func (s *rwSide) waitChannel(string) waitSpec { return waitSpec{channel: s.rw.channel, all: true} }

func (s *rwSide) tryAcquire(ctx context.Context, field string, serverLease, wait time.Duration, guard guardWait, wa waitAttempt) (attempt, bool, error) {
	rw, c := s.rw, s.rw.c
	enqueue := wait != 0
	var status, value, nonce, place int64
	var err error
	acked := true
	if s.write {
		owner := strings.TrimSuffix(field, ":write")
		var res generated.RwWriteAcquireResult
		if guard.on() {
			var reply rueidis.RedisResult
			reply, acked, err = c.sendGuarded(ctx, guard, func() (rueidis.Completed, error) {
				return generated.RwWriteAcquireCommand(c.rc, rw.key, rw.writers, rw.fence, rw.prefix, serverLease, owner, field, rw.waiterTimeout, enqueue, rw.cfg.fenceIdle)
			})
			if err == nil {
				res, err = generated.DecodeRwWriteAcquire(reply)
			}
		} else {
			res, err = generated.RwWriteAcquire(ctx, c.rc, rw.key, rw.writers, rw.fence, rw.prefix, serverLease, owner, field, rw.waiterTimeout, enqueue, rw.cfg.fenceIdle)
		}
		status, value = res.Status, res.Value
		if res.Place != nil {
			place = *res.Place
		}
	} else {
		var res generated.RwReadAcquireResult
		timeouts := rwTimeouts(rw.key, field)
		writeField := field + ":write"
		if wa.shared {
			// Read holds draw no fencing token: a new one of a shared owner
			// is marked instead, so that its release can name it.
			nonce = c.readNonce()
		}
		if guard.on() {
			var reply rueidis.RedisResult
			reply, acked, err = c.sendGuarded(ctx, guard, func() (rueidis.Completed, error) {
				return generated.RwReadAcquireCommand(c.rc, rw.key, timeouts, rw.writers, serverLease, field, writeField, nonce)
			})
			if err == nil {
				res, err = generated.DecodeRwReadAcquire(reply)
			}
		} else {
			res, err = generated.RwReadAcquire(ctx, c.rc, rw.key, timeouts, rw.writers, serverLease, field, writeField, nonce)
		}
		status, value = res.Status, res.Value
	}
	if errors.Is(err, generated.ErrUpgrade) {
		return attempt{}, false, ErrUpgrade
	}
	if err != nil {
		return attempt{}, false, err
	}
	if status != 0 {
		a := attempt{granted: true, fresh: status == 1}
		if a.fresh && s.write {
			a.token = value
		} else if a.fresh {
			a.token = nonce
		}
		return a, acked, nil
	}
	// A waiting writer also calls again every third of the waiter timeout
	// to keep its registration, and a reader held back by a writer that
	// died sees the registration expire.
	rem := max(msDuration(value), 0)
	if value == 0 {
		// PTTL 0: the expiry is due within the millisecond. rem 0 is a
		// holder without expiry (-1), which is called again every third
		// of the waiter timeout.
		rem = time.Millisecond
	}
	sleep := rw.waiterTimeout / 3
	if rem > 0 {
		sleep = min(sleep, rem)
	}
	return attempt{queued: s.write && enqueue, place: place, remaining: rem, sleep: sleep}, acked, nil
}

func (s *rwSide) releaseOnce(ctx context.Context, field string, r releaseCall) (releaseStatus, time.Duration, error) {
	rw, c := s.rw, s.rw.c
	if s.write {
		res, err := generated.RwWriteRelease(ctx, c.rc, rw.key, rw.channel, r.latch, rw.prefix, rw.fence, r.lease, field, r.publish, r.latchTTL, r.token)
		return releaseStatus(res.Status), 0, err
	}
	left, done := c.writeLeft(rw.key, field)
	res, err := generated.RwReadRelease(ctx, c.rc, rw.key, rw.channel, rwTimeouts(rw.key, field), rw.prefix, r.latch, field, r.publish, r.latchTTL, r.token, left)
	done(err)
	return readReleased(res, err)
}

// writeLeft is what a read release of field passes for its owner's write
// hold on key, if this Client has one: the time to that hold's loss
// deadline plus the drift margin the hold's lease keeps past it, so the
// server keeps the lock at least as far past the writer's loss as a grant
// or renewal does; 0 for none. The release may bring the lock's expiry
// forward to it, so it counts as a call that sets the write hold's expiry
// until done: an Extend or renewal it overlaps cannot move that hold's loss
// deadline later on its reply, which the server may have run before the
// release. done takes the release's error: one of unknown outcome may still
// run at any time, and sets left from then on, so no later call moves the
// deadline further than that (leaseUnknown).
func (c *Client) writeLeft(key, field string) (time.Duration, func(error)) {
	c.mu.Lock()
	var h *hold
	if c.writeHold > 0 {
		h = c.holds[holdID(key, field+":write")]
	}
	c.mu.Unlock()
	if h == nil || h.released() {
		return 0, func(error) {}
	}
	m := c.leaseCall(h, time.Time{})
	at := h.lossAt.Load()
	if at == 0 {
		return 0, func(error) { m.end() } // no loss deadline: no lease known
	}
	sent := time.Now()
	left := max(time.Duration(at-c.monoClock()), time.Millisecond) + lossMargin(h.lease)
	return left, func(err error) {
		if err != nil && unknownOutcome(err) {
			c.leaseUnknown(h, left, lossDeadline(sent, left))
		}
		m.end()
	}
}

// releaseGuarded is a read release with WAIT after its script on the same
// connection (sendGuarded): the lease its reply reports may move the loss
// deadline later, which only a lease a replica has may do. A write release
// re-arms the lock with the hold's own lease and never moves it later: it
// is not sent here (see unlock), and goes out unguarded.
func (s *rwSide) releaseGuarded(ctx context.Context, field string, r releaseCall, guard guardWait) (releaseStatus, time.Duration, bool, error) {
	if s.write {
		st, left, err := s.releaseOnce(ctx, field, r)
		return st, left, false, err
	}
	rw, c := s.rw, s.rw.c
	left, done := c.writeLeft(rw.key, field)
	reply, acked, err := c.sendGuarded(ctx, guard, func() (rueidis.Completed, error) {
		return generated.RwReadReleaseCommand(c.rc, rw.key, rw.channel, rwTimeouts(rw.key, field), rw.prefix, r.latch, field, r.publish, r.latchTTL, r.token, left)
	})
	done(err)
	if err != nil {
		return notHeld, 0, false, err
	}
	st, left, err := readReleased(generated.DecodeRwReadRelease(reply))
	return st, left, acked, err
}

// readReleased is what a read release's reply reports (see releaseOnce).
func readReleased(res generated.RwReadReleaseResult, err error) (releaseStatus, time.Duration, error) {
	if err == nil && res.Status == 3 {
		// The hold's lease had run out while other readers kept the lock:
		// it was given up, but it was not held.
		return lapsed, 0, nil
	}
	if err != nil || releaseStatus(res.Status) != stillHeld {
		return releaseStatus(res.Status), 0, err
	}
	return stillHeld, msDuration(res.Value), nil
}

// fenceNow: a read hold's releases name its mark instead (RwReadAcquire),
// kept in its first lease key: a shared owner's fresh read grant marks it
// with a new nonce (a re-entry leaves it), so a release naming the mark as
// the undo read it, or its absence (-1), leaves a fresh grant made since
// alone. A read hold of an owner that is not shared is marked 1, which
// every release matches.
func (s *rwSide) fenceNow(ctx context.Context, field string) (int64, error) {
	if !s.write {
		return readFence(ctx, s.rw.c, rwTimeouts(s.rw.key, field)+":1")
	}
	return readFence(ctx, s.rw.c, s.rw.fence)
}

func (s *rwSide) holdsOf(ctx context.Context, field string) (int64, error) {
	rw := s.rw
	reader, writer := field, field+":write"
	if s.write {
		reader, writer = strings.TrimSuffix(field, ":write"), field
	}
	// From the primary, as every undo decides on it (readPrimary).
	st, err := readPrimaryAs(ctx, rw.c, func() (rueidis.Completed, error) {
		return generated.RwStateCommand(rw.c.rc, rw.key, rw.prefix, reader, writer)
	}, generated.DecodeRwState)
	if s.write {
		return st.Writes, err
	}
	// The field as the hash has it, leases or not: a release gives a field
	// whose leases ran out back too (RwReadRelease).
	return st.Reads, err
}

func (s *rwSide) abandon(ctx context.Context, field string, _ time.Duration, place int64) {
	if s.write {
		s.rw.withdraw(ctx, field, place)
	}
}

// withdraw removes a writer that gave up from the pending-writer set, detached
// from its context, bounded by leaveContext; should it fail, the
// registration's deadline ends it. place is the deadline the wait last
// registered (0: not known): an attempt held up on its way may reach the
// server after the owner's next wait registered under the same member, and
// must leave that registration alone.
func (rw *RWMutex) withdraw(ctx context.Context, writeField string, place int64) {
	c := rw.c
	rctx, cancel := c.leaveContext(ctx, rw.cfg.releaseTimeout)
	defer cancel()
	repeat := false
	err := c.retryRelease(rctx, func(publish string) error {
		// A repeat publishes even when it finds the writer gone: the
		// attempt before it may have failed at its publish.
		again := repeat
		repeat = true
		_, err := generated.RwCancel(rctx, c.rc, rw.key, rw.writers, rw.channel, writeField, publish, again, place)
		return err
	})
	if err != nil && !c.closed() {
		c.log.Debug("withdrawing waiting writer", "lock", rw.name, "err", err)
	}
}

// RWState is a snapshot of a reader-writer lock, read in one round trip.
type RWState struct {
	Mode   string        // "read", "write", or "" when free
	Reads  int64         // read holds of the owner in the context (0 once all their leases ran out)
	Writes int64         // write holds of the owner in the context
	Lease  time.Duration // remaining lease; 0 when free, negative without expiry
}

// State reads the lock's mode, the hold counts of the owner in ctx (a lock
// context's or WithOwner's) and the remaining lease. A lock of another kind
// on the name is ErrWrongKind.
func (rw *RWMutex) State(ctx context.Context) (RWState, error) {
	if err := rw.lockSpec.check(ctx); err != nil {
		return RWState{}, opError("state of", rw.name, err)
	}
	owner, _ := OwnerFrom(ctx)
	if err := rwOwnerOK(owner); err != nil {
		return RWState{}, opError("state of", rw.name, err)
	}
	field := rw.c.id + ":" + owner
	st, err := generated.RwState(ctx, rw.c.rc, rw.key, rw.prefix, field, field+":write")
	if err != nil {
		return RWState{}, opError("state of", rw.name, wrongKind(err))
	}
	// Leased: a read field whose leases all ran out beside other readers
	// stays in the hash until the lock ends, but holds nothing.
	out := RWState{Reads: st.Leased, Writes: st.Writes}
	if st.Mode != nil {
		out.Mode = *st.Mode
		out.Lease = msDuration(st.TTL)
	}
	return out, nil
}

// IsLocked reports whether anyone holds the lock, for reading or writing
// (State(ctx).Mode != "").
func (rw *RWMutex) IsLocked(ctx context.Context) (bool, error) {
	st, err := rw.State(ctx)
	return st.Mode != "", err
}

// ForceUnlock deletes the lock whoever holds it and wakes its waiters. It
// reports whether there was a lock to delete. Read and write holds this
// Client had of it end at once, as for Mutex.ForceUnlock. A lock of another
// kind on the name is left alone (ErrWrongKind).
func (rw *RWMutex) ForceUnlock(ctx context.Context) (bool, error) {
	if err := rw.check(ctx); err != nil {
		return false, opError("force unlock", rw.name, err)
	}
	c := rw.c
	ok, err := c.forceUnlock(ctx, rw.key, sidesOf(sideRead, sideWrite), func(ctx context.Context, record, publish string, slack time.Duration) (bool, error) {
		return generated.RwForceUnlock(ctx, c.rc, rw.key, rw.channel, record, publish, c.recordTTL, slack)
	})
	if err != nil {
		return false, fmt.Errorf("scriptlock: force unlock %q: %w", rw.name, wrongKind(err))
	}
	return ok, nil
}
