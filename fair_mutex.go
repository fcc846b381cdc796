package scriptlock

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
)

// DefaultWaiterTimeout is how long a queued FairMutex waiter (or a pending
// RWMutex writer) stays registered without calling Redis again. Live waiters
// call again every third of it, so only a waiter that died is ever dropped.
const DefaultWaiterTimeout = 5 * time.Second

// WithWaiterTimeout sets how long a FairMutex waiter, or an RWMutex writer
// waiting to write, keeps its place without calling Redis again (default 5 s;
// below 30ms is ErrInvalidArgument).
// A live waiter refreshes its place every d/3; the place of one whose process
// died or lost its connection expires at most d after its last call, and the
// waiters behind it, which call every d/3, drop it within d/3 more, so it
// cannot block the others.
// A waiting Mutex calls again at least every d/3 as well: a wake sent to a
// waiter that died costs the others at most that long.
// For Mutex, FairMutex and RWMutex.
func WithWaiterTimeout(d time.Duration) SharedOption {
	return sharedOption{"WithWaiterTimeout", kindMutex | kindFairMutex | kindRWMutex, func(c *config) {
		if d < 30*time.Millisecond {
			c.fail("waiter timeout must be at least 30ms, got %s", d)
			return
		}
		c.waiterTimeout = d
	}}
}

func (c *config) waiterTTL() time.Duration {
	if c.waiterTimeout > 0 {
		return c.waiterTimeout
	}
	return DefaultWaiterTimeout
}

// FairMutex is a reentrant distributed lock granted in strict arrival order.
// The lock itself is Mutex's hash (so Go and Java, FairMutex, Mutex and
// Redisson's RLock/RFairLock on one name exclude each other); the waiter
// queue is the list scriptlock_fair_queue:{name}, the waiters' liveness
// deadlines the sorted set scriptlock_fair_timeout:{name}, and a release
// names the next waiter ("0:<field>") on its Client's wake channel,
// scriptlock_fair_wake:{name}:<client-id>.
// Redisson never reads these queue keys: its RFairLock queue
// (redisson_lock_queue:{name}) gives its scores another meaning, so Java and
// Go waiters on one name are not ordered with each other, and hand-offs
// between them wait for a poll (at most a third of the waiter timeout)
// instead of a message (a Java RLock holder's unlock does reach the first
// waiter in line: it listens on Redisson's channel while such a holder
// holds, as a Mutex waiter does). For fleets where Java services queue on the same
// name, WithRedissonFairQueue switches the handle to Redisson's queue
// protocol, at Redisson's costs.
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
	m             Mutex
	queue         string
	timeouts      string
	waiterTimeout time.Duration
	ctl           *fairCtl      // FairAcquire's ctl values for this handle
	threadWait    time.Duration // > 0: Redisson's queue protocol (WithRedissonFairQueue)
	wake          string        // our protocol: scriptlock_fair_wake:{name}; + ":<client-id>" wakes that client's first waiter by name
	javaQueue     string        // our protocol: redisson_lock_queue:{name}, whose first threads a release tells
}

// fairCtl holds FairAcquire's ctl values (see the script) for one waiter
// timeout and fencing counter idle time, indexed by enqueue (2) + rewake (1):
// formatted once, not on every call.
type fairCtl [4]string

func newFairCtl(waiterTimeout, fenceIdle time.Duration) *fairCtl {
	var fc fairCtl
	for i := range fc {
		fc[i] = fairAcquireCtl(i&2 != 0, i&1 != 0, waiterTimeout, fenceIdle)
	}
	return &fc
}

// fairAcquireCtl formats FairAcquire's ctl argument; durations in whole
// milliseconds, rounded up, as the generated callers send durations.
func fairAcquireCtl(enqueue, rewake bool, waiterTimeout, fenceIdle time.Duration) string {
	ceilMs := func(d time.Duration) int64 {
		ms := d.Milliseconds()
		if d > time.Duration(ms)*time.Millisecond {
			ms++
		}
		return ms
	}
	var buf [48]byte
	b := append(buf[:0], '-', '-')
	if enqueue {
		b[0] = 'e'
	}
	if rewake {
		b[1] = 'r'
	}
	b = strconv.AppendInt(b, ceilMs(waiterTimeout), 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, ceilMs(fenceIdle), 10)
	return string(b)
}

// ctlFor is the handle's ctl value for one call.
func (f *FairMutex) ctlFor(enqueue, rewake bool) string {
	i := 0
	if enqueue {
		i += 2
	}
	if rewake {
		i++
	}
	return f.ctl[i]
}

// FairMutex returns a handle for the fair lock called name. opts override the
// Client's settings for this handle, as for Mutex; WithWaiterTimeout sets the
// eviction bound for dead waiters and WithRedissonFairQueue switches to
// Redisson's queue protocol. The failover guard (WithFailoverGuard) applies
// as for Mutex. An invalid name or option is an error here.
func (c *Client) FairMutex(name string, opts ...LockOption) (*FairMutex, error) {
	// The options come first: Redisson's queue protocol
	// (WithRedissonFairQueue) names other keys.
	cfg, err := c.handleOptions(kindFairMutex, opts)
	if err != nil {
		return nil, handleError(kindFairMutex, name, err)
	}
	f := &FairMutex{waiterTimeout: cfg.waiterTTL(), threadWait: cfg.redissonFair, ctl: c.fairCtl}
	if f.waiterTimeout != c.cfg.waiterTTL() || cfg.fenceIdle != c.cfg.fenceIdle {
		f.ctl = newFairCtl(f.waiterTimeout, cfg.fenceIdle)
	}
	f.m.lockSpec = lockSpec{c: c, name: name, cfg: cfg}
	if err := f.nameKeys(); err != nil {
		return nil, handleError(kindFairMutex, name, err)
	}
	return f, nil
}

// nameKeys validates the name and derives the lock's key and every key and
// channel name of the lock from it, as Mutex and fairKeys name them, in one
// allocation: handles are often made per request.
func (f *FairMutex) nameKeys() error {
	s := &f.m.lockSpec
	queue, timeouts, wake, javaQueue := "scriptlock_fair_queue", "scriptlock_fair_timeout", "scriptlock_fair_wake", "redisson_lock_queue"
	if f.threadWait > 0 {
		queue, timeouts, wake, javaQueue = "redisson_lock_queue", "redisson_lock_timeout", "", ""
	}
	var ns [7]string
	key, err := lockNames(ns[:], s.cfg.prefix, s.name, "redisson_lock__channel", "redisson_lock_token", "redisson_unlock_latch", queue, timeouts, wake, javaQueue)
	if err != nil {
		return err
	}
	s.key = key
	s.channel, s.fence, s.latch, f.queue, f.timeouts, f.wake, f.javaQueue = ns[0], ns[1], ns[2], ns[3], ns[4], ns[5], ns[6]
	return nil
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
		return nil, opError("lock", f.m.name, invalidf("negative wait %s", wait))
	}
	return f.acquire(ctx, wait, f.m.cfg.lease)
}

// LockWithLease is Lock with a lease that expires on its own: no watchdog.
func (f *FairMutex) LockWithLease(ctx context.Context, lease time.Duration) (context.Context, error) {
	if err := checkLease(lease); err != nil {
		return nil, opError("lock", f.m.name, err)
	}
	return f.acquire(ctx, -1, lease)
}

// TryLockWithLease is TryLock with a lease that expires on its own.
func (f *FairMutex) TryLockWithLease(ctx context.Context, wait, lease time.Duration) (context.Context, error) {
	if wait < 0 {
		return nil, opError("lock", f.m.name, invalidf("negative wait %s", wait))
	}
	if err := checkLease(lease); err != nil {
		return nil, opError("lock", f.m.name, err)
	}
	return f.acquire(ctx, wait, lease)
}

func (f *FairMutex) acquire(ctx context.Context, wait, lease time.Duration) (context.Context, error) {
	if ctx == nil {
		return nil, opError("lock", f.m.name, invalidf("nil context"))
	}
	return f.m.c.acquire(ctx, f, wait, lease)
}

func (f *FairMutex) spec() *lockSpec { return &f.m.lockSpec }
func (f *FairMutex) side() side      { return sideExclusive }

func (f *FairMutex) fieldSuffix() string { return "" }

// waitChannel: a release wakes exactly the next in line. In our protocol it
// names that waiter on its client's wake channel, which a client keeps open
// for a while after its last waiter (subscriptionLinger), so a client that
// waits again soon neither subscribes nor tries twice; in Redisson's, each
// waiter listens on its own channel, as Redisson's waiters do. Every local
// waiter on that channel is the same owner (goroutines sharing it through
// WithOwner), so its "0" wakes them all, as a named wake does: whichever is
// granted the lock, the others re-enter it, and the queue entry they shared
// is gone with the grant, so nothing else would wake them.
func (f *FairMutex) waitChannel(field string) waitSpec {
	if f.threadWait > 0 {
		return waitSpec{channel: f.m.channel + ":" + field, all: true}
	}
	return waitSpec{channel: f.m.channel, wake: f.wake, id: field}
}

func (f *FairMutex) tryAcquire(ctx context.Context, field string, serverLease, wait time.Duration, guard guardWait, _ waitAttempt) (attempt, bool, error) {
	c := f.m.c
	enqueue := wait != 0
	type reply struct {
		res   fairReply
		acked bool
	}
	// Our protocol's script tells a new queue head after evicting dead ones;
	// its repeat after a refused SPUBLISH finds them gone and tells the head
	// all the same (rewake), or the head would learn of the free lock only
	// at its next call.
	repeat := false
	r, err := publishing(c, func(publish string) (reply, error) {
		rewake := repeat
		repeat = true
		if !guard.on() {
			res, err := f.acquireCall(ctx, serverLease, field, wait, publish, rewake)
			return reply{res, true}, err
		}
		raw, acked, err := c.sendGuarded(ctx, guard, func() (rueidis.Completed, error) {
			return f.acquireCommand(serverLease, field, wait, publish, rewake)
		})
		if err != nil {
			return reply{}, err
		}
		res, err := f.decodeAcquire(raw)
		return reply{res, acked}, err
	})
	if err != nil {
		return attempt{}, false, err
	}
	res, acked := r.res, r.acked
	if res.Status != 0 {
		a := attempt{granted: true, fresh: res.Status == 1}
		if a.fresh {
			a.token = res.Value
		}
		return a, acked, nil
	}
	if enqueue {
		f.noteMixedQueues(ctx)
	}
	rem := max(msDuration(res.Value), 0)
	// Calling again every third of the waiter timeout keeps our place; the
	// first in line also wakes when the holder's lease ends, in case the
	// holder died. In Redisson's protocol every queued waiter's reply is the
	// time until the score before its own passes (when a dead waiter ahead
	// is evicted), and Redisson's waiters sleep that long: ours wake then
	// too, or a dead Java head would hold them up to a third of the waiter
	// timeout longer than it holds up a Redisson waiter.
	sleep := f.waiterTimeout / 3
	if (res.Head == 1 || f.threadWait > 0) && rem > 0 {
		sleep = min(sleep, rem)
	}
	// Redisson's queue protocol answers the lease as PTTL reads it, no expiry
	// as -1: 0 is an expiry due within the millisecond.
	if res.Head == 1 && res.Value == 0 && f.threadWait > 0 {
		sleep = time.Millisecond
	}
	// A Redisson RLock holder's release sends "0" on the lock's channel
	// alone, which the head listens for while such a holder holds.
	return attempt{queued: enqueue, remaining: rem, sleep: sleep, foreign: res.Foreign}, acked, nil
}

// releasesLast: FairReleaseLast serves the scriptlock queue protocol only.
func (f *FairMutex) releasesLast() bool { return f.threadWait == 0 }

func (f *FairMutex) releaseOnce(ctx context.Context, field string, r releaseCall) (releaseStatus, time.Duration, error) {
	var st int64
	var err error
	if r.last {
		st, err = generated.FairReleaseLast(ctx, f.m.c.rc, f.m.key, f.queue, f.timeouts, f.wake, f.javaQueue, f.m.channel, field, r.publish)
	} else {
		st, err = f.releaseCall(ctx, r, field)
	}
	if err != nil {
		return notHeld, 0, err
	}
	return releaseStatus(st), 0, nil
}

func (f *FairMutex) fenceNow(ctx context.Context, field string) (int64, error) {
	return f.m.fenceNow(ctx, field)
}

func (f *FairMutex) holdsOf(ctx context.Context, field string) (int64, error) {
	return f.m.holdsOf(ctx, field)
}

func (f *FairMutex) abandon(ctx context.Context, field string, wait time.Duration, _ int64) {
	f.leaveQueue(ctx, field, wait)
}

// leaveQueue takes a waiter that gave up out of the queue, detached from its
// (possibly cancelled) context, bounded by leaveContext. Should it fail, the
// waiter's deadline drops it (in Redisson's protocol, its score passing).
func (f *FairMutex) leaveQueue(ctx context.Context, field string, wait time.Duration) {
	c := f.m.c
	rctx, cancel := c.leaveContext(ctx, f.m.cfg.releaseTimeout)
	defer cancel()
	if err := f.leaveLate(rctx, field, wait); err != nil && !c.closed() {
		c.log.Debug("leaving fair lock queue", "lock", f.m.name, "err", err)
	}
}

// leaveLate takes field's entry, if any, out of the queue, bounded by ctx
// (leaveQueue, and the undo of an attempt of unknown outcome: see
// lateLeaver).
func (f *FairMutex) leaveLate(ctx context.Context, field string, wait time.Duration) error {
	repeat := false
	return f.m.c.retryRelease(ctx, func(publish string) error {
		again := repeat
		repeat = true
		return f.cancelCall(ctx, field, wait, publish, again)
	})
}

// Unlock releases one hold of the owner in ctx; the last hold deletes the lock
// and wakes the first live waiter. It runs detached from ctx, bounded by the
// release timeout. A non-owner gets ErrNotHeld and nothing changes. When the
// release fails, the hold is dropped here (its context ends with
// ErrLockLost) and the lock ends with its lease on the server.
func (f *FairMutex) Unlock(ctx context.Context) error {
	return f.m.c.unlock(ctx, f)
}

// ForceUnlock deletes the lock whoever holds it and wakes the first live
// waiter of each queue protocol (this handle's and the other one,
// scriptlock's or Redisson's), evicting dead ones ahead of it first. It reports whether there was a lock to delete. Holds this
// Client had of it end at once, as for Mutex.ForceUnlock. A lock of another
// kind on the name is left alone (ErrWrongKind).
func (f *FairMutex) ForceUnlock(ctx context.Context) (bool, error) {
	if err := f.m.check(ctx); err != nil {
		return false, opError("force unlock", f.m.name, err)
	}
	ok, err := f.m.c.forceUnlock(ctx, f.m.key, sidesOf(sideExclusive), f.forceUnlockCall)
	if err != nil {
		return false, fmt.Errorf("scriptlock: force unlock %q: %w", f.m.name, wrongKind(err))
	}
	return ok, nil
}

// State reads whether the lock is held, the hold count of the owner in ctx
// and the remaining lease, as Mutex.State.
func (f *FairMutex) State(ctx context.Context) (LockState, error) { return f.m.State(ctx) }

// IsLocked reports whether anyone holds the lock (State(ctx).Locked).
func (f *FairMutex) IsLocked(ctx context.Context) (bool, error) { return f.m.IsLocked(ctx) }
