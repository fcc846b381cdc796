package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
)

// Mutex is a reentrant distributed lock with Redisson's RLock semantics and
// key layout. A Mutex is a cheap handle: it holds no connection and may be
// shared by goroutines; who holds the lock is the owner id in the context
// (WithOwner) or, without one, the handle's own random id.
type Mutex struct {
	c       *Client
	name    string
	key     string
	channel string
	fence   string
	owner   string
	field   string // <client-id>:<owner> for the handle's own owner id
	latch   string // prefix of this handle's release latch keys
	cfg     config
	err     error // invalid name or options, reported by every method
}

// Mutex returns a handle for the lock called name. opts override the Client's
// settings (lease, prefix, failover guard, release timeout) for this handle.
// An invalid name or option is reported by the handle's methods.
func (c *Client) Mutex(name string, opts ...Option) *Mutex {
	m := &Mutex{c: c, name: name, owner: randomID(), cfg: c.cfg}
	m.field = c.id + ":" + m.owner
	m.cfg.err = nil
	m.cfg.apply(opts)
	m.err = m.cfg.err
	if m.err == nil {
		m.key, m.err = lockKey(m.cfg.prefix, name)
	}
	if m.err == nil {
		m.channel = redissonName("redisson_lock__channel", m.key)
		m.fence = redissonName("redisson_lock_token", m.key)
		m.latch = redissonName("redisson_unlock_latch", m.key) + ":" + c.id + ":"
	}
	return m
}

var _ Locker = (*Mutex)(nil)

// Name returns the lock's name.
func (m *Mutex) Name() string { return m.name }

// Key returns the Redis key of the lock (prefix + name).
func (m *Mutex) Key() string { return m.key }

func (m *Mutex) ownerOf(ctx context.Context) string {
	if o, ok := OwnerFrom(ctx); ok {
		return o
	}
	return m.owner
}

// fieldOf returns the lock-hash field of the owner in ctx.
func (m *Mutex) fieldOf(owner string) string {
	if owner == m.owner {
		return m.field
	}
	return m.c.id + ":" + owner
}

func (m *Mutex) check(ctx context.Context) error {
	if m.err != nil {
		return m.err
	}
	if ctx == nil {
		return invalidf("nil context")
	}
	if m.c.closed() {
		return ErrClosed
	}
	return nil
}

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
		return nil, invalidf("negative wait %s", wait)
	}
	return m.acquire(ctx, wait, m.cfg.lease)
}

// LockWithLease is Lock with a lease that expires on its own: no watchdog.
func (m *Mutex) LockWithLease(ctx context.Context, lease time.Duration) (context.Context, error) {
	if lease <= 0 {
		return nil, invalidf("lease must be positive, got %s", lease)
	}
	return m.acquire(ctx, -1, lease)
}

// TryLockWithLease is TryLock with a lease that expires on its own.
func (m *Mutex) TryLockWithLease(ctx context.Context, wait, lease time.Duration) (context.Context, error) {
	if wait < 0 {
		return nil, invalidf("negative wait %s", wait)
	}
	if lease <= 0 {
		return nil, invalidf("lease must be positive, got %s", lease)
	}
	return m.acquire(ctx, wait, lease)
}

// acquire is the one acquisition loop: wait < 0 waits until ctx ends.
func (m *Mutex) acquire(ctx context.Context, wait, lease time.Duration) (context.Context, error) {
	if m.c.observing(ctx) {
		return m.c.observeAcquire(ctx, Op{PrimitiveMutex, m.name}, func(ctx context.Context) (context.Context, error) { return m.acquire(ctx, wait, lease) })
	}
	if err := m.check(ctx); err != nil {
		return nil, err
	}
	owner := m.ownerOf(ctx)
	field := m.fieldOf(owner)
	serverLease := lease
	if serverLease == 0 {
		serverLease = m.cfg.watchdogLease
	}
	var (
		lctx      context.Context
		remaining time.Duration
	)
	ok, err := m.c.waitNotified(ctx, m.channel, false, wait, func() (bool, time.Duration, error) {
		start := time.Now()
		// The call itself is not cut short by ctx: a cancelled call could
		// still take the lock on the server and leave it held, unused, for a
		// whole lease. It is short (bounded by the client's own timeouts),
		// and an acquisition that outlived ctx is undone below.
		cctx := ctx
		if ctx.Done() != nil {
			cctx = context.WithoutCancel(ctx)
		}
		reply, err := m.c.acquireOnce(cctx, m, field, serverLease)
		if err != nil {
			return false, 0, err
		}
		res := acquireResult(reply)
		if !res.acquired() {
			// Wake on the release message; the holder's remaining lease is
			// the fallback in case a message is lost.
			remaining = max(res.remaining(), 0)
			return false, remaining, nil
		}
		lctx = m.c.acquired(ctx, m, owner, field, res, lease, serverLease, start)
		if err := ctx.Err(); err != nil {
			_ = m.Unlock(lctx)
			return false, 0, err
		}
		return true, 0, nil
	})
	switch {
	case err != nil:
		return nil, m.waitErr(ctx, err)
	case !ok:
		return nil, &NotAcquiredError{Name: m.name, Remaining: remaining}
	}
	return lctx, nil
}

func (m *Mutex) waitErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("scriptlock: lock %q: wait ended: %w", m.name, cerr)
	}
	return fmt.Errorf("scriptlock: lock %q: %w", m.name, err)
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

// acquireOnce runs the acquire script, followed by the failover guard's WAIT
// when the primary has replicas.
func (c *Client) acquireOnce(ctx context.Context, m *Mutex, field string, lease time.Duration) (int64, error) {
	if !c.guarded(ctx, &m.cfg) {
		return generated.MutexAcquire(ctx, c.rc, m.key, m.fence, lease, field)
	}
	return c.acquireGuarded(ctx, m, field, lease)
}

// acquired records a successful acquisition and builds the lock's context.
func (c *Client) acquired(ctx context.Context, m *Mutex, owner, field string, res acquireResult, lease, serverLease time.Duration, start time.Time) context.Context {
	g := grant{name: m.name, key: m.key, channel: m.channel, owner: owner, field: field, fresh: res.fresh(),
		lease: lease, serverLease: serverLease, every: m.cfg.watchdogEvery, start: start}
	if g.fresh {
		g.token = int64(res)
	}
	return c.grantHold(ctx, g)
}

// Unlock releases one hold of the owner in ctx; the last hold deletes the
// lock and wakes a waiter. It runs detached from ctx (bounded by the release
// timeout), so a cancelled request still releases its lock. A non-owner, or an
// owner whose lock expired, gets ErrNotHeld and nothing changes.
func (m *Mutex) Unlock(ctx context.Context) error {
	if m.c.observing(ctx) {
		return m.c.observeRelease(ctx, Op{PrimitiveMutex, m.name}, m.Unlock)
	}
	if m.err != nil {
		return m.err
	}
	if ctx == nil {
		return invalidf("nil context")
	}
	field := m.fieldOf(m.ownerOf(ctx))
	id := holdID(m.key, field)
	m.c.mu.Lock()
	h := m.c.holds[id]
	m.c.mu.Unlock()
	lease := m.cfg.watchdogLease
	if h != nil && h.lease > 0 {
		lease = h.lease
	} else if m.cfg.lease > 0 {
		lease = m.cfg.lease
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.cfg.releaseTimeout)
	defer cancel()
	res, held, err := m.c.release(rctx, m, lease, field)
	if err != nil {
		// As Redisson does, stop renewing a last hold whose release failed:
		// the lock then ends with its lease instead of living on.
		if h != nil {
			m.c.mu.Lock()
			last := h.count <= 1
			m.c.mu.Unlock()
			if last {
				m.c.drop(h, errors.Join(ErrLockLost, err))
			}
		}
		return fmt.Errorf("scriptlock: unlock %q: %w", m.name, err)
	}
	switch {
	case !held:
		if h != nil {
			m.c.drop(h, ErrLockLost)
		}
		return fmt.Errorf("scriptlock: unlock %q: %w", m.name, ErrNotHeld)
	case res == 0:
		if h != nil {
			m.c.mu.Lock()
			h.count--
			m.c.mu.Unlock()
			h.untrack(ctx)
		}
	default:
		if h != nil {
			m.c.drop(h, context.Canceled)
		}
	}
	return nil
}

// release runs the release script: ok=false means the owner did not hold the
// lock; otherwise res is 0 (holds remain) or 1 (released). Transport failures
// are retried with the same latch key, so a retry whose first attempt did run
// reports that outcome instead of "not held". The latch lives as long as the
// release may be retried.
func (c *Client) release(ctx context.Context, m *Mutex, lease time.Duration, field string) (res int64, ok bool, err error) {
	// The client id is random and the counter never repeats within it, so
	// latch keys are unique without drawing random bytes per release.
	latch := m.latch + strconv.FormatUint(c.requests.Add(1), 36)
	latchTTL := c.cfg.releaseTimeout
	if d, ok := ctx.Deadline(); ok {
		latchTTL = max(time.Until(d), time.Second)
	}
	for attempt := 0; ; attempt++ {
		res, ok, err = generated.MutexRelease(ctx, c.rc, m.key, m.channel, latch, lease, field, c.publishCommand(), latchTTL, attempt > 0)
		if err == nil {
			return res, ok, nil
		}
		if _, redisErr := rueidis.IsRedisErr(err); redisErr || attempt >= 3 || ctx.Err() != nil {
			return res, ok, err
		}
		select {
		case <-time.After(time.Duration(attempt+1) * 50 * time.Millisecond):
		case <-ctx.Done():
			return res, ok, err
		}
	}
}

// ForceUnlock deletes the lock whoever holds it and wakes its waiters. It
// reports whether there was a lock to delete.
func (m *Mutex) ForceUnlock(ctx context.Context) (bool, error) {
	if err := m.check(ctx); err != nil {
		return false, err
	}
	ok, err := generated.MutexForceUnlock(ctx, m.c.rc, m.key, m.channel, m.c.publishCommand())
	if err != nil {
		return false, fmt.Errorf("scriptlock: force unlock %q: %w", m.name, err)
	}
	return ok, nil
}

// IsLocked reports whether anyone holds the lock.
func (m *Mutex) IsLocked(ctx context.Context) (bool, error) {
	st, err := m.state(ctx)
	return st.Owners > 0, err
}

// HoldCount returns how many times the owner in ctx holds the lock (0: not
// held by that owner).
func (m *Mutex) HoldCount(ctx context.Context) (int64, error) {
	st, err := m.state(ctx)
	return st.Holds, err
}

// RemainingLease returns the lock's remaining lease: 0 when nobody holds it,
// a negative duration when it is held without expiry.
func (m *Mutex) RemainingLease(ctx context.Context) (time.Duration, error) {
	st, err := m.state(ctx)
	if err != nil || st.Owners == 0 {
		return 0, err
	}
	return time.Duration(st.TTL) * time.Millisecond, nil
}

func (m *Mutex) state(ctx context.Context) (generated.MutexStateResult, error) {
	if err := m.check(ctx); err != nil {
		return generated.MutexStateResult{}, err
	}
	st, err := generated.MutexState(ctx, m.c.rc, m.key, m.fieldOf(m.ownerOf(ctx)))
	if err != nil {
		return st, fmt.Errorf("scriptlock: state of %q: %w", m.name, err)
	}
	return st, nil
}
