package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
)

// DefaultWaiterTimeout is how long a queued FairMutex waiter (or a pending
// RWMutex writer) stays registered without calling Redis again. Live waiters
// call again every third of it, so only a waiter that died is ever dropped.
const DefaultWaiterTimeout = 5 * time.Second

// WithWaiterTimeout sets how long a FairMutex waiter, or an RWMutex writer
// waiting to write, keeps its place without calling Redis again (default 5 s).
// A live waiter refreshes its place every d/3; one whose process died or lost
// its connection is dropped after at most d, so it cannot block the others.
func WithWaiterTimeout(d time.Duration) Option {
	return func(c *config) {
		if d < 30*time.Millisecond {
			c.fail("waiter timeout must be at least 30ms, got %s", d)
			return
		}
		c.waiterTimeout = d
	}
}

func (c *config) waiterTTL() time.Duration {
	if c.waiterTimeout > 0 {
		return c.waiterTimeout
	}
	return DefaultWaiterTimeout
}

// FairMutex is a reentrant distributed lock granted in strict arrival order,
// with Redisson's RFairLock key layout: the lock hash (as Mutex), the waiter
// queue redisson_lock_queue:{name}, the waiters' liveness deadlines in the
// sorted set redisson_lock_timeout:{name}, and one wake-up channel per waiter,
// redisson_lock__channel:{name}:<client-id>:<owner-id>.
//
// A caller gets the lock only when it is free and nobody is queued ahead of
// it, so a newcomer never overtakes a waiter, even right after an unlock. A
// release wakes exactly the first live waiter. Each waiter's deadline is the
// server's clock (TIME inside the script) plus the waiter timeout and is
// pushed back every time the waiter calls again (at least every third of the
// timeout), so a live waiter is never dropped while a dead one is evicted from
// the head of the queue once its deadline passes. Every operation costs
// O(log n) in the number of waiters; giving up a wait removes the waiter from
// the list in O(its position).
//
// Owners, reentrancy, the watchdog, the lock-loss context and fencing tokens
// work as for Mutex.
type FairMutex struct {
	m             *Mutex
	queue         string
	timeouts      string
	waiterTimeout time.Duration
}

// FairMutex returns a handle for the fair lock called name. opts override the
// Client's settings for this handle; WithWaiterTimeout sets the eviction bound
// for dead waiters. An invalid name or option is reported by the methods.
// The failover guard (WithFailoverGuard) does not apply to FairMutex yet.
func (c *Client) FairMutex(name string, opts ...Option) *FairMutex {
	f := &FairMutex{m: c.Mutex(name, opts...)}
	f.waiterTimeout = f.m.cfg.waiterTTL()
	if f.m.err == nil {
		f.queue = redissonName("redisson_lock_queue", f.m.key)
		f.timeouts = redissonName("redisson_lock_timeout", f.m.key)
	}
	return f
}

var _ Locker = (*FairMutex)(nil)

// Name returns the lock's name.
func (f *FairMutex) Name() string { return f.m.name }

// Key returns the Redis key of the lock hash (prefix + name).
func (f *FairMutex) Key() string { return f.m.key }

// Lock waits in line until the lock is acquired or ctx ends. See Mutex.Lock.
func (f *FairMutex) Lock(ctx context.Context) (context.Context, error) {
	return f.acquire(ctx, -1, f.m.cfg.lease)
}

// TryLock is Lock that gives up after wait and leaves the queue; wait 0 makes
// one attempt without queueing, which fails whenever anyone is waiting.
func (f *FairMutex) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	if wait < 0 {
		return nil, invalidf("negative wait %s", wait)
	}
	return f.acquire(ctx, wait, f.m.cfg.lease)
}

// LockWithLease is Lock with a lease that expires on its own: no watchdog.
func (f *FairMutex) LockWithLease(ctx context.Context, lease time.Duration) (context.Context, error) {
	if lease <= 0 {
		return nil, invalidf("lease must be positive, got %s", lease)
	}
	return f.acquire(ctx, -1, lease)
}

// TryLockWithLease is TryLock with a lease that expires on its own.
func (f *FairMutex) TryLockWithLease(ctx context.Context, wait, lease time.Duration) (context.Context, error) {
	if wait < 0 {
		return nil, invalidf("negative wait %s", wait)
	}
	if lease <= 0 {
		return nil, invalidf("lease must be positive, got %s", lease)
	}
	return f.acquire(ctx, wait, lease)
}

func (f *FairMutex) acquire(ctx context.Context, wait, lease time.Duration) (context.Context, error) {
	m := f.m
	if err := m.check(ctx); err != nil {
		return nil, err
	}
	c := m.c
	owner := m.ownerOf(ctx)
	field := c.id + ":" + owner
	serverLease := lease
	if serverLease == 0 {
		serverLease = m.cfg.watchdogLease
	}
	var deadline time.Time
	if wait > 0 {
		deadline = time.Now().Add(wait)
	}
	queued := false
	defer func() {
		if queued {
			f.leaveQueue(ctx, field)
		}
	}()
	var w *waiter
	defer func() {
		if w != nil {
			c.subs.leave(w)
		}
	}()
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	refresh := f.waiterTimeout / 3
	for {
		start := time.Now()
		res, err := generated.FairAcquire(ctx, c.rc, m.key, f.queue, f.timeouts, m.fence, m.channel,
			serverLease, field, f.waiterTimeout, wait != 0, c.publishCommand())
		if err != nil {
			if isUnknownCommand(err) && c.sharded() {
				c.shardedOff.Store(true)
				continue
			}
			queued = queued || wait != 0
			return nil, m.waitErr(ctx, err)
		}
		if res.Status != 0 {
			queued = false
			g := grant{name: m.name, key: m.key, channel: m.channel, owner: owner, field: field, lease: lease,
				serverLease: serverLease, every: m.cfg.watchdogEvery, start: start, fresh: res.Status == 1}
			if g.fresh {
				g.token = res.Value
			}
			return c.grantHold(ctx, g), nil
		}
		queued = wait != 0
		remaining := time.Duration(res.Value) * time.Millisecond
		if wait == 0 || (wait > 0 && !time.Now().Before(deadline)) {
			return nil, &NotAcquiredError{Name: m.name, Remaining: max(remaining, 0)}
		}
		if w == nil || w.dead() {
			if w != nil {
				c.subs.leave(w)
				w = nil
			}
			w, err = f.subscribe(ctx, field, deadline)
			if err != nil {
				if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
					return nil, &NotAcquiredError{Name: m.name, Remaining: max(remaining, 0)}
				}
				return nil, err
			}
			continue // subscribed: try again before waiting, so no wake-up is missed
		}
		// Wait for our own wake-up. Calling again every third of the waiter
		// timeout keeps our place; the first in line also wakes when the
		// holder's lease ends, in case the holder died.
		sleep := refresh
		if res.Head == 1 && remaining > 0 {
			sleep = min(sleep, remaining)
		}
		if wait > 0 {
			sleep = min(sleep, time.Until(deadline))
		}
		if timer == nil {
			timer = time.NewTimer(sleep)
		} else {
			timer.Reset(sleep)
		}
		select {
		case <-w.wake:
		case <-timer.C:
		case <-ctx.Done():
			return nil, m.waitErr(ctx, ctx.Err())
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// subscribe joins the waiter's own channel.
func (f *FairMutex) subscribe(ctx context.Context, field string, deadline time.Time) (*waiter, error) {
	jctx, cancel := ctx, context.CancelFunc(func() {})
	if !deadline.IsZero() {
		jctx, cancel = context.WithDeadline(ctx, deadline)
	}
	defer cancel()
	w, err := f.m.c.subs.join(jctx, f.m.channel+":"+field)
	if err != nil {
		if ctx.Err() != nil {
			return nil, f.m.waitErr(ctx, ctx.Err())
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		return nil, fmt.Errorf("scriptlock: lock %q: subscribe: %w", f.m.name, err)
	}
	return w, nil
}

// leaveQueue takes a waiter that gave up out of the queue, detached from its
// (possibly cancelled) context. Should it fail, the waiter's deadline drops it.
func (f *FairMutex) leaveQueue(ctx context.Context, field string) {
	c := f.m.c
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.m.cfg.releaseTimeout)
	defer cancel()
	for range 2 {
		_, err := generated.FairCancel(rctx, c.rc, f.m.key, f.queue, f.timeouts, f.m.channel, field, c.publishCommand())
		if isUnknownCommand(err) && c.sharded() {
			c.shardedOff.Store(true)
			continue
		}
		if err != nil && !c.closed() {
			c.log.Debug("leaving fair lock queue", "lock", f.m.name, "err", err)
		}
		return
	}
}

// Unlock releases one hold of the owner in ctx; the last hold deletes the lock
// and wakes the first live waiter. It runs detached from ctx, bounded by the
// release timeout. A non-owner gets ErrNotHeld and nothing changes.
func (f *FairMutex) Unlock(ctx context.Context) error {
	m := f.m
	if m.err != nil {
		return m.err
	}
	if ctx == nil {
		return invalidf("nil context")
	}
	c := m.c
	field := c.id + ":" + m.ownerOf(ctx)
	c.mu.Lock()
	h := c.holds[holdID(m.key, field)]
	c.mu.Unlock()
	lease := m.cfg.watchdogLease
	if h != nil && h.lease > 0 {
		lease = h.lease
	} else if m.cfg.lease > 0 {
		lease = m.cfg.lease
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.cfg.releaseTimeout)
	defer cancel()
	latch := redissonName("redisson_unlock_latch", m.key) + ":" + randomID()
	var res generated.FairReleaseResult
	err := c.retryRelease(rctx, func(publish string) (err error) {
		res, err = generated.FairRelease(rctx, c.rc, m.key, f.queue, f.timeouts, m.channel, latch, lease, field, publish, releaseLatchTTL)
		return err
	})
	if err != nil {
		return fmt.Errorf("scriptlock: unlock %q: %w", m.name, err)
	}
	return c.released(h, m.name, res.Status)
}

const releaseLatchTTL = 30 * time.Second

// grant describes a successful acquisition for grantHold.
type grant struct {
	name, key, channel string
	owner, field       string
	token              int64 // fencing token of a fresh acquisition, 0: none
	fresh              bool  // a new hold, not a re-entry
	lease              time.Duration
	serverLease        time.Duration // the lease the script set; the watchdog keeps it when lease is 0
	every              time.Duration // watchdog interval
	kind               *renewKind    // nil: renewed like a Mutex
	start              time.Time
}

// grantHold records an acquisition in the Client's holds, schedules watchdog
// renewal when there is no explicit lease, and builds the lock's context.
func (c *Client) grantHold(ctx context.Context, g grant) context.Context {
	id := holdID(g.key, g.field)
	c.mu.Lock()
	h := c.holds[id]
	if h != nil && g.fresh {
		// A fresh acquisition while we still had a record: the old hold had
		// expired on the server without our noticing. Finish it as lost.
		delete(c.holds, id)
		c.mu.Unlock()
		if h.renew != nil {
			c.wd.remove(h.renew)
		}
		h.end(ErrLockLost)
		c.mu.Lock()
		h = nil
	}
	if h == nil {
		h = &hold{name: g.name, key: g.key, field: g.field, channel: g.channel, token: g.token}
		c.holds[id] = h
	}
	h.count++
	if g.lease == 0 && h.renew == nil {
		h.lease = g.serverLease
		h.renew = c.wd.addKind(h, g.every, g.start, g.kind)
	}
	c.mu.Unlock()

	lctx, cancel := context.WithCancelCause(ctx)
	h.track(cancel)
	lctx = WithOwner(lctx, g.owner)
	if h.token != 0 {
		lctx = withFence(lctx, g.name, h.token)
	}
	return lctx
}

// released applies a release script's status to the local hold record.
func (c *Client) released(h *hold, name string, status int64) error {
	switch status {
	case 0:
		if h != nil {
			c.drop(h, ErrLockLost)
		}
		return fmt.Errorf("scriptlock: unlock %q: %w", name, ErrNotHeld)
	case 1:
		if h != nil {
			c.mu.Lock()
			h.count--
			c.mu.Unlock()
		}
	default:
		if h != nil {
			c.drop(h, context.Canceled)
		}
	}
	return nil
}

// retryRelease runs a release call, retrying transport failures (the call's
// latch key makes a retry whose first attempt did run report that outcome) and
// falling back to plain pub/sub when the server refuses sharded publishing.
func (c *Client) retryRelease(ctx context.Context, call func(publish string) error) error {
	for attempt := 0; ; attempt++ {
		err := call(c.publishCommand())
		if err == nil {
			return nil
		}
		if isUnknownCommand(err) && c.sharded() {
			c.shardedOff.Store(true)
			continue
		}
		if _, redisErr := rueidis.IsRedisErr(err); redisErr || attempt >= 3 || ctx.Err() != nil {
			return err
		}
		select {
		case <-time.After(time.Duration(attempt+1) * 50 * time.Millisecond):
		case <-ctx.Done():
			return err
		}
	}
}

// ForceUnlock deletes the lock whoever holds it and wakes the first waiter.
// It reports whether there was a lock to delete.
func (f *FairMutex) ForceUnlock(ctx context.Context) (bool, error) {
	if err := f.m.check(ctx); err != nil {
		return false, err
	}
	c := f.m.c
	var ok bool
	err := c.retryRelease(ctx, func(publish string) (err error) {
		ok, err = generated.FairForceUnlock(ctx, c.rc, f.m.key, f.queue, f.m.channel, publish)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("scriptlock: force unlock %q: %w", f.m.name, err)
	}
	return ok, nil
}

// IsLocked reports whether anyone holds the lock.
func (f *FairMutex) IsLocked(ctx context.Context) (bool, error) { return f.m.IsLocked(ctx) }

// HoldCount returns how many times the owner in ctx holds the lock.
func (f *FairMutex) HoldCount(ctx context.Context) (int64, error) { return f.m.HoldCount(ctx) }

// RemainingLease returns the lock's remaining lease (see Mutex.RemainingLease).
func (f *FairMutex) RemainingLease(ctx context.Context) (time.Duration, error) {
	return f.m.RemainingLease(ctx)
}
