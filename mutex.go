package scriptlock

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
)

// Mutex is a reentrant distributed lock with Redisson's RLock semantics and
// key layout. A Mutex is a cheap handle: it holds no connection and may be
// shared by goroutines. Who holds the lock is the owner id in the context:
// the context an earlier Lock returned, or WithOwner's; without one, every
// Lock call is a new owner, so goroutines sharing a handle exclude each other
// as with sync.Mutex.
type Mutex struct {
	lockSpec
}

// Mutex returns a handle for the lock called name. opts override the Client's
// settings (lease, watchdog, failover guard, release timeout, fence idle time)
// for this handle. An invalid name or option is an error here (errors.Is
// ErrInvalidName or ErrInvalidArgument), so a handle that exists is valid.
func (c *Client) Mutex(name string, opts ...LockOption) (*Mutex, error) {
	return c.newMutex(kindMutex, name, opts)
}

func (c *Client) newMutex(k kind, name string, opts []LockOption) (*Mutex, error) {
	s, err := newSpecWith(c, k, name, opts, "redisson_lock__channel")
	if err != nil {
		return nil, err
	}
	return &Mutex{lockSpec: s}, nil
}

// newSpec validates a handle's name and options and names the keys every
// lock of the Redisson hash layout shares.
func newSpec(c *Client, k kind, name string, opts []LockOption) (lockSpec, error) {
	return newSpecWith(c, k, name, opts, "")
}

// newSpecWith is newSpec that also names the release channel (channelPrefix
// "": none). The derived names share one allocation: handles are often made
// per request.
func newSpecWith(c *Client, k kind, name string, opts []LockOption, channelPrefix string) (lockSpec, error) {
	cfg, key, err := c.handleConfig(k, name, opts)
	if err != nil {
		return lockSpec{}, err
	}
	s := lockSpec{c: c, name: name, key: key, cfg: cfg}
	var ns [3]string
	redissonNames(ns[:], s.key, "redisson_lock_token", "redisson_unlock_latch", channelPrefix)
	s.fence, s.latch, s.channel = ns[0], ns[1], ns[2]
	return s, nil
}

var _ Locker = (*Mutex)(nil)

// Name returns the lock's name.
func (m *Mutex) Name() string { return m.name }

// Key returns the Redis key of the lock (prefix + name).
func (m *Mutex) Key() string { return m.key }

func (m *Mutex) fieldSuffix() string { return "" }

// Lock waits until the lock is acquired or ctx ends. Without an explicit lease
// (WithLease) the watchdog keeps renewing it until Unlock. The returned
// context is cancelled with cause ErrLockLost if the lock is lost, carries the
// owner id (nested Lock calls re-enter) and the fencing token (Fence).
func (m *Mutex) Lock(ctx context.Context) (context.Context, error) {
	return m.acquire(ctx, -1, m.cfg.lease)
}

// TryLock is Lock that gives up after wait; wait 0 makes one attempt. When it
// gives up, the error is a *NotAcquiredError (errors.Is ErrNotAcquired).
func (m *Mutex) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	if wait < 0 {
		return nil, opError("lock", m.name, invalidf("negative wait %s", wait))
	}
	return m.acquire(ctx, wait, m.cfg.lease)
}

// LockWithLease is Lock with a lease that expires on its own: no watchdog.
func (m *Mutex) LockWithLease(ctx context.Context, lease time.Duration) (context.Context, error) {
	if lease <= 0 {
		return nil, opError("lock", m.name, invalidf("lease must be positive, got %s", lease))
	}
	return m.acquire(ctx, -1, lease)
}

// TryLockWithLease is TryLock with a lease that expires on its own.
func (m *Mutex) TryLockWithLease(ctx context.Context, wait, lease time.Duration) (context.Context, error) {
	if wait < 0 {
		return nil, opError("lock", m.name, invalidf("negative wait %s", wait))
	}
	if lease <= 0 {
		return nil, opError("lock", m.name, invalidf("lease must be positive, got %s", lease))
	}
	return m.acquire(ctx, wait, lease)
}

func (m *Mutex) acquire(ctx context.Context, wait, lease time.Duration) (context.Context, error) {
	if ctx == nil {
		return nil, opError("lock", m.name, invalidf("nil context"))
	}
	return m.c.acquire(ctx, m, wait, lease)
}

// dead reports whether the waiter's subscription has ended.
func (w *waiter) dead() bool {
	select {
	case <-w.sub.done:
		return true
	default:
		return false
	}
}

// acquireResult reads MutexAcquire's reply: > 0 acquired with that fencing
// token, 0 re-entered, < 0 contended with -1-reply ms of lease left.
type acquireResult int64

func (r acquireResult) acquired() bool { return r >= 0 }
func (r acquireResult) fresh() bool    { return r > 0 }
func (r acquireResult) remaining() time.Duration {
	return time.Duration(-1-r) * time.Millisecond
}

func (m *Mutex) spec() *lockSpec { return &m.lockSpec }
func (m *Mutex) side() side      { return sideExclusive }

func (m *Mutex) waitChannel(string) (string, bool) { return m.channel, false }

func (m *Mutex) tryAcquire(ctx context.Context, field string, serverLease, _ time.Duration, guarded bool) (attempt, bool, error) {
	var res int64
	var err error
	acked := true
	if guarded {
		var reply rueidis.RedisResult
		reply, acked, err = m.c.sendGuarded(ctx, m.cfg.guardTimeout, func() (rueidis.Completed, error) {
			return generated.MutexAcquireCommand(m.c.rc, m.key, m.fence, serverLease, field, m.cfg.fenceIdle)
		})
		if err == nil {
			res, err = generated.DecodeMutexAcquire(reply)
		}
	} else {
		res, err = generated.MutexAcquire(ctx, m.c.rc, m.key, m.fence, serverLease, field, m.cfg.fenceIdle)
	}
	if err != nil {
		return attempt{}, false, err
	}
	r := acquireResult(res)
	if !r.acquired() {
		// Wake on the release message; the holder's remaining lease is the
		// fallback in case a message is lost.
		rem := max(r.remaining(), 0)
		return attempt{remaining: rem, sleep: rem}, acked, nil
	}
	a := attempt{granted: true, fresh: r.fresh()}
	if a.fresh {
		a.token = res
	}
	return a, acked, nil
}

func (m *Mutex) releaseOnce(ctx context.Context, field string, lease time.Duration, latch string, latchTTL time.Duration, retry, vouched bool, publish string) (releaseStatus, error) {
	res, held, err := generated.MutexRelease(ctx, m.c.rc, m.key, m.channel, latch, lease, field, publish, latchTTL, retry, vouched)
	switch {
	case err != nil || !held:
		return notHeld, err
	case res == 0:
		return stillHeld, nil
	}
	return freed, nil
}

func (m *Mutex) holdsOf(ctx context.Context, field string) (int64, error) {
	st, err := generated.MutexState(ctx, m.c.rc, m.key, field)
	return st.Holds, err
}

func (m *Mutex) abandon(context.Context, string, time.Duration) {}

// Unlock releases one hold of the owner in ctx; the last hold deletes the
// lock and wakes a waiter. It runs detached from ctx (bounded by the release
// timeout), so a cancelled request still releases its lock. A non-owner, or an
// owner whose lock expired, gets ErrNotHeld and nothing changes. When the
// release fails, the hold is dropped here (its context ends with
// ErrLockLost) and the lock ends with its lease on the server.
func (m *Mutex) Unlock(ctx context.Context) error {
	return m.c.unlock(ctx, m)
}

// ForceUnlock deletes the lock whoever holds it and wakes its waiters. It
// reports whether there was a lock to delete.
func (m *Mutex) ForceUnlock(ctx context.Context) (bool, error) {
	if err := m.lockSpec.check(ctx); err != nil {
		return false, opError("force unlock", m.name, err)
	}
	ok, err := generated.MutexForceUnlock(ctx, m.c.rc, m.key, m.channel, m.c.publishCommand())
	if err != nil {
		return false, fmt.Errorf("scriptlock: force unlock %q: %w", m.name, err)
	}
	return ok, nil
}

// LockState is a snapshot of a Mutex or FairMutex, read in one round trip
// (Redisson's isLocked, getHoldCount and remainTimeToLive at once).
type LockState struct {
	// Locked: someone holds the lock.
	Locked bool
	// HoldCount is how many times the owner in the context asked with holds
	// the lock (0: not held by that owner, or no owner in the context).
	HoldCount int64
	// Lease is the lock's remaining lease: 0 when free, negative when held
	// without expiry.
	Lease time.Duration
}

// State reads whether the lock is held, the hold count of the owner in ctx
// (a lock context's or WithOwner's) and the remaining lease.
func (m *Mutex) State(ctx context.Context) (LockState, error) {
	if err := m.lockSpec.check(ctx); err != nil {
		return LockState{}, opError("state of", m.name, err)
	}
	owner, _ := OwnerFrom(ctx)
	st, err := generated.MutexState(ctx, m.c.rc, m.key, m.c.fieldOf(m, owner))
	if err != nil {
		return LockState{}, opError("state of", m.name, err)
	}
	out := LockState{Locked: st.Owners > 0, HoldCount: st.Holds}
	if out.Locked {
		out.Lease = time.Duration(st.TTL) * time.Millisecond
	}
	return out, nil
}

// IsLocked reports whether anyone holds the lock (State(ctx).Locked).
func (m *Mutex) IsLocked(ctx context.Context) (bool, error) {
	st, err := m.State(ctx)
	return st.Locked, err
}
