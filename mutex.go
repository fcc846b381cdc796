package scriptlock

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
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
//
// Waiting is notified and wakes one waiter per release, not every waiting
// process: a Go waiter that finds the lock held registers in the same call in
// the sorted set scriptlock_lock_waiters:{name} (scored by the server's clock),
// and a release publishes Redisson's "0" on redisson_lock__channel:{name}
// (which wakes Redisson's waiters as Redisson's own release does) and then
// names the longest-registered Go waiter on its own client's channel,
// scriptlock_lock_wake:{name}:<client-id>: one message to one process. Go
// waiters listen for "0" only while the holder is a Redisson client (whose
// release sends nothing else), so it wakes one of them. A woken waiter that
// finds the lock taken again keeps its place; one that gives up passes the
// wake on.
// While a release of its own client is handing the lock to a woken waiter, a
// new Lock on that client queues behind it rather than take the free lock,
// so under contention Go waiters are served about in arrival order. Mutex
// stays unfair otherwise: a caller that finds the lock free takes it.
// A release passes over waiters whose client no longer listens (PUBLISH
// reaches nobody: a dead process's). A waiter calls again at least every
// third of the waiter timeout (WithWaiterTimeout), which bounds what a wake
// lost otherwise costs (in transit, or to a dead waiter on a Cluster without
// sharded pub/sub, where PUBLISH counts one node's subscribers).
type Mutex struct {
	lockSpec
	waiters string    // scriptlock_lock_waiters:{name}: registered Go waiters
	wake    string    // scriptlock_lock_wake:{name}: + ":<client-id>" wakes one of them by name
	ctl     *mutexCtl // MutexAcquire's usual ctl values for this handle
}

// mutexCtl holds MutexAcquire's ctl values that have no per-call part,
// indexed by whether the caller will wait.
type mutexCtl [2]string

// defaultMutexCtl is the ctl MutexAcquire reads when it is sent none: a Lock
// that waits, with the default fence idle time and waiter timeout. Such a
// call leaves it out, and the lease too when it is DefaultLease (the
// script's default, in ms), which spares the server an argument each on
// every acquisition (see the script).
var defaultMutexCtl = acquireCtl(false, false, DefaultFenceIdle, DefaultWaiterTimeout, 0)

// defaultMutexLease is the lease, in ms, MutexAcquire reads when it is sent none.
const defaultMutexLease = "30000"

// leaseMs formats a lease in ms as the generated callers do (a part of one
// rounded up), once per value for the process, not per handle: handles are
// often made per request, and a Client's lease is every handle's.
func leaseMs(lease time.Duration) string {
	if lease == DefaultLease {
		return defaultMutexLease
	}
	ms := lease.Milliseconds()
	if lease > time.Duration(ms)*time.Millisecond {
		ms++
	}
	slot := &leaseTexts[uint64(ms)%uint64(len(leaseTexts))]
	if f := slot.Load(); f != nil && f.ms == ms {
		return f.s
	}
	f := &formattedLease{ms: ms, s: strconv.FormatInt(ms, 10)}
	slot.Store(f)
	return f.s
}

// leaseTexts holds recently sent leases (a cache, not state).
var leaseTexts [64]atomic.Pointer[formattedLease]

type formattedLease struct {
	ms int64
	s  string
}

// acquireOpts is MutexAcquire's optional arguments, the lease and ctl: the
// defaults at the end are left out. They are written into buf, the caller's
// (on its stack): a slice made here would cost an allocation per call.
func acquireOpts(buf *[2]string, lease time.Duration, ctl string) []string {
	if ctl != defaultMutexCtl {
		buf[0], buf[1] = leaseMs(lease), ctl
		return buf[:2]
	}
	if lease != DefaultLease {
		buf[0] = leaseMs(lease)
		return buf[:1]
	}
	return nil
}

func newMutexCtl(fenceIdle, waiterTTL time.Duration) *mutexCtl {
	return &mutexCtl{acquireCtl(false, false, fenceIdle, 0, 0), acquireCtl(false, false, fenceIdle, waiterTTL, 0)}
}

// acquireCtl formats MutexAcquire's ctl argument (see the script).
func acquireCtl(polite, leave bool, fenceIdle, waiterTTL time.Duration, since int64) string {
	flag := func(on bool, c byte) byte {
		if on {
			return c
		}
		return '-'
	}
	var buf [64]byte
	b := append(buf[:0], flag(polite, 'p'), flag(leave, 'l'))
	b = strconv.AppendInt(b, fenceIdle.Milliseconds(), 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, waiterTTL.Milliseconds(), 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, since, 10)
	return string(b)
}

// Mutex returns a handle for the lock called name. opts override the Client's
// settings (lease, watchdog, failover guard, release timeout, fence idle time)
// for this handle. An invalid name or option is an error here (errors.Is
// ErrInvalidName or ErrInvalidArgument), so a handle that exists is valid.
func (c *Client) Mutex(name string, opts ...LockOption) (*Mutex, error) {
	return c.newMutex(kindMutex, name, opts)
}

func (c *Client) newMutex(k kind, name string, opts []LockOption) (*Mutex, error) {
	var ns [2]string
	s, err := newSpecWith(c, k, name, opts, "redisson_lock__channel", ns[:], "scriptlock_lock_waiters", "scriptlock_lock_wake")
	if err != nil {
		return nil, err
	}
	m := &Mutex{lockSpec: s}
	m.waiters, m.wake = ns[0], ns[1]
	m.ctl = c.mutexCtl
	if m.cfg.waiterTTL() != c.cfg.waiterTTL() || m.cfg.fenceIdle != c.cfg.fenceIdle {
		m.ctl = newMutexCtl(m.cfg.fenceIdle, m.cfg.waiterTTL())
	}
	return m, nil
}

// newSpecWith validates a handle's name and options and names the keys every
// lock of the Redisson hash layout shares, and the release channel
// (channelPrefix "": none). The derived names share one allocation: handles
// are often made per request. extra receives the names for extraPrefixes,
// from the same allocation.
func newSpecWith(c *Client, k kind, name string, opts []LockOption, channelPrefix string, extra []string, extraPrefixes ...string) (lockSpec, error) {
	var ns, ps [5]string
	ps[0], ps[1], ps[2] = "redisson_lock_token", "redisson_unlock_latch", channelPrefix
	n := 3 + copy(ps[3:], extraPrefixes)
	// The key is part of the same allocation.
	cfg, key, err := c.handleConfigNames(k, name, opts, ns[:n], ps[:n]...)
	if err != nil {
		return lockSpec{}, err
	}
	s := lockSpec{c: c, name: name, key: key, cfg: cfg}
	s.fence, s.latch, s.channel = ns[0], ns[1], ns[2]
	copy(extra, ns[3:])
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
	if err := checkLease(lease); err != nil {
		return nil, opError("lock", m.name, err)
	}
	return m.acquire(ctx, -1, lease)
}

// TryLockWithLease is TryLock with a lease that expires on its own.
func (m *Mutex) TryLockWithLease(ctx context.Context, wait, lease time.Duration) (context.Context, error) {
	if wait < 0 {
		return nil, opError("lock", m.name, invalidf("negative wait %s", wait))
	}
	if err := checkLease(lease); err != nil {
		return nil, opError("lock", m.name, err)
	}
	return m.acquire(ctx, wait, lease)
}

func (m *Mutex) acquire(ctx context.Context, wait, lease time.Duration) (context.Context, error) {
	if ctx == nil {
		return nil, opError("lock", m.name, invalidf("nil context"))
	}
	return m.c.acquire(ctx, m, wait, lease)
}

// politeFallback bounds the wait of a caller that queued behind a hand-off
// instead of taking a free lock, in case the hand-off was already over.
const politeFallback = 4 * handoffGrace

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
// token, 0 re-entered, < 0 contended with -1-reply ms of lease left, plus
// the refusal's flags.
type acquireResult int64

const (
	foreignHolder = 1 << 42 // refused by a holder that is not a scriptlock client
	behindOthers  = 1 << 43 // a polite caller queued behind other waiters
)

func (r acquireResult) acquired() bool { return r >= 0 }
func (r acquireResult) fresh() bool    { return r > 0 }

// refusal decodes a refusal: the holder's remaining lease and the flags.
func (r acquireResult) refusal() (remaining time.Duration, foreign, behind bool) {
	v := int64(-1 - r)
	if behind = v >= behindOthers; behind {
		v -= behindOthers
	}
	if foreign = v >= foreignHolder; foreign {
		v -= foreignHolder
	}
	return time.Duration(v) * time.Millisecond, foreign, behind
}

func (m *Mutex) spec() *lockSpec { return &m.lockSpec }
func (m *Mutex) side() side      { return sideExclusive }

// waitChannel: a waiter is woken by name on its client's wake channel (a
// release wakes one Go waiter, not every client), and hears Redisson's "0"
// while a Redisson client holds the lock.
func (m *Mutex) waitChannel(field string) waitSpec {
	return waitSpec{channel: m.channel, wake: m.wake, id: field, idle: m.cfg.waiterTTL() / 3}
}

func (m *Mutex) tryAcquire(ctx context.Context, field string, serverLease, wait time.Duration, guard guardWait, wa waitAttempt) (attempt, bool, error) {
	var res int64
	var err error
	acked := true
	// A caller that will wait registers as a waiter when refused. One that
	// registered earlier and was not taken out by a wake leaves the set when
	// it gets the lock, as does a woken one that may have registered again
	// after the release took it out.
	var waiterTTL time.Duration
	w := 0
	if wait != 0 {
		waiterTTL, w = m.cfg.waiterTTL(), 1
	}
	leave := wa.queued && (wa.since == 0 || wa.again)
	ctl := m.ctl[w]
	if leave || wa.polite || wa.since != 0 {
		ctl = acquireCtl(wa.polite, leave, m.cfg.fenceIdle, waiterTTL, wa.since)
	}
	if guard.on() {
		var reply rueidis.RedisResult
		reply, acked, err = m.c.sendGuarded(ctx, guard, func() (rueidis.Completed, error) {
			var opts [2]string
			return generated.MutexAcquireCommand(m.c.rc, m.key, m.fence, m.waiters, field, acquireOpts(&opts, serverLease, ctl)...)
		})
		if err == nil {
			res, err = generated.DecodeMutexAcquire(reply)
		}
	} else {
		var opts [2]string
		res, err = generated.MutexAcquire(ctx, m.c.rc, m.key, m.fence, m.waiters, field, acquireOpts(&opts, serverLease, ctl)...)
	}
	if err != nil {
		return attempt{}, false, err
	}
	r := acquireResult(res)
	if !r.acquired() {
		// Wake on the release message naming us; the fallback, in case it
		// is lost (its waiter died, a reconnect), is the holder's remaining
		// lease, at most a third of the waiter timeout: calling again that
		// often also keeps the waiter set from expiring.
		// A holder without a lease (rem 0: no expiry) gets no earlier call
		// than that third.
		rem, foreign, behind := r.refusal()
		rem = max(rem, 0)
		sleep := rem
		if waiterTTL > 0 && (rem == 0 || rem > waiterTTL/3) {
			sleep = waiterTTL / 3
		}
		switch {
		case wa.polite && behind:
			// Queued behind other waiters: releases reach us in turn. A
			// woken waiter that died costs what any dead waiter does.
			sleep = waiterTTL / 3
		case wa.polite && rem == 0:
			// Queued behind a hand-off that may already be over, with
			// nobody else in line: try again soon in case nobody is left
			// to wake us.
			sleep = politeFallback
		}
		return attempt{remaining: rem, sleep: sleep, queued: waiterTTL > 0, foreign: foreign}, acked, nil
	}
	a := attempt{granted: true, fresh: r.fresh()}
	if a.fresh {
		a.token = res
	}
	return a, acked, nil
}

func (m *Mutex) releasesLast() bool { return true }

func (m *Mutex) releaseOnce(ctx context.Context, field string, r releaseCall) (releaseStatus, time.Duration, error) {
	var res int64
	var held bool
	var err error
	switch {
	case r.last && r.publish == "spublish":
		res, held, err = generated.MutexReleaseLast(ctx, m.c.rc, m.key, m.channel, m.waiters, m.wake, field, r.publish)
	case r.last:
		// PUBLISH is the script's default: one argument fewer for the
		// server to take in on every usual release.
		res, held, err = generated.MutexReleaseLast(ctx, m.c.rc, m.key, m.channel, m.waiters, m.wake, field)
	default:
		queue, timeouts := fairKeys(m.key, true)
		res, held, err = generated.MutexRelease(ctx, m.c.rc, m.key, m.channel, r.latch, m.waiters, m.wake, m.fence, queue, timeouts, r.lease, field, r.publish, r.latchTTL, r.retry, r.vouched, r.token, r.again)
	}
	switch {
	case err != nil || !held:
		return notHeld, 0, err
	case res == 0:
		return stillHeld, 0, nil
	case res == 2:
		m.c.subs.noteHandoff(m.wake)
	}
	return freed, 0, nil
}

func (m *Mutex) fenceNow(ctx context.Context, _ string) (int64, error) {
	return readFence(ctx, m.c, m.fence)
}

// readFence reads a fencing-token counter from the primary, as the undo's
// count is read (readPrimary): -1 when it is missing.
func readFence(ctx context.Context, c *Client, fence string) (int64, error) {
	return readPrimaryAs(ctx, c, func() (rueidis.Completed, error) {
		return generated.FenceReadCommand(c.rc, fence)
	}, generated.DecodeFenceRead)
}

func (m *Mutex) holdsOf(ctx context.Context, field string) (int64, error) {
	// From the primary, as every undo decides on it (readPrimary).
	st, err := readPrimaryAs(ctx, m.c, func() (rueidis.Completed, error) {
		return generated.MutexStateCommand(m.c.rc, m.key, field)
	}, generated.DecodeMutexState)
	return st.Holds, err
}

// abandon takes a waiter that gave up out of the waiter set, passing on a
// wake it was sent and will not use. Detached from the caller's (possibly
// cancelled) context, bounded by leaveContext; should it fail, the set's
// expiry or the others' fallback timers cover it.
func (m *Mutex) abandon(ctx context.Context, field string, _ time.Duration, _ int64) {
	rctx, cancel := m.c.leaveContext(ctx, m.cfg.releaseTimeout)
	defer cancel()
	// One latch for every attempt: a repeat after a lost reply finds its
	// first attempt's answer there (whether it passed a wake on), and
	// passes on no wake of its own. It outlives every attempt (all within
	// rctx).
	var buf [256]byte
	b := append(append(append(append(buf[:0], m.latch...), ':'), m.c.id...), ':')
	latch := string(strconv.AppendUint(b, m.c.requests.Add(1), 36))
	err := m.c.retryRelease(rctx, func(publish string) error {
		_, err := generated.MutexWaitCancel(rctx, m.c.rc, m.key, m.waiters, m.wake, latch, field, publish, max(m.cfg.releaseTimeout, time.Second))
		return err
	})
	if err != nil && !m.c.closed() {
		m.c.log.Debug("leaving lock waiters", "lock", m.name, "err", err)
	}
}

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
// reports whether there was a lock to delete. Holds this Client had of it
// end at once (their contexts with ErrLockLost), before the call is sent and
// whatever its outcome: once the script runs, another owner may be granted
// the lock before the reply is back, or when it is lost; holders on other Clients
// find out at their next renewal or when their lease ends. A call whose
// reply is lost is made again, and the repeat answers what the first
// attempt did without deleting anything: it records its answer for a minute
// under redisson_unlock_latch:{name}:<client-id>:<n>, reserved before the
// call for as long as ctx waits: a call held up on its way and reaching
// Redis after that deletes nothing. An error that remains, a dial error too
// (rueidis makes the call again on a new connection after the one it was
// sent on broke, and answers that dial's error), leaves the outcome unknown
// and says so: forcing again may delete a lock taken since. A lock of
// another kind on the name is left alone (ErrWrongKind).
func (m *Mutex) ForceUnlock(ctx context.Context) (bool, error) {
	if err := m.lockSpec.check(ctx); err != nil {
		return false, opError("force unlock", m.name, err)
	}
	// again: an attempt failed at its SPUBLISH, after its writes, and is
	// made again with PUBLISH; its waiters have not heard. A repeat after a
	// lost reply (rueidis's, or callRecorded's) is not one: its first
	// attempt woke them.
	again := false
	ok, err := m.c.forceUnlock(ctx, m.key, sidesOf(sideExclusive), func(ctx context.Context, record, publish string, slack time.Duration) (bool, error) {
		ok, err := generated.MutexForceUnlock(ctx, m.c.rc, m.key, m.channel, m.waiters, m.wake, record, publish, m.c.recordTTL, slack, again)
		if err != nil && publish == "spublish" && isUnknownCommand(err) {
			again = true
		}
		return ok, err
	})
	if err != nil {
		return false, fmt.Errorf("scriptlock: force unlock %q: %w", m.name, wrongKind(err))
	}
	return ok, nil
}

// LockState is a snapshot of a Mutex, FairMutex or LeanMutex, read in one
// round trip (Redisson's isLocked, getHoldCount and remainTimeToLive at
// once).
type LockState struct {
	// Locked: someone holds the lock.
	Locked bool
	// HoldCount is how many holds of the lock the owner named in State's
	// context has (0: none, or no owner in the context; a LeanMutex's owner
	// has at most 1).
	HoldCount int64
	// Lease is the lock's remaining lease: 0 when free, negative when held
	// without expiry.
	Lease time.Duration
}

// State reads whether the lock is held, the hold count of the owner in ctx
// (a lock context's or WithOwner's) and the remaining lease. A lock of
// another kind on the name is ErrWrongKind.
func (m *Mutex) State(ctx context.Context) (LockState, error) {
	if err := m.lockSpec.check(ctx); err != nil {
		return LockState{}, opError("state of", m.name, err)
	}
	owner, _ := OwnerFrom(ctx)
	st, err := generated.MutexState(ctx, m.c.rc, m.key, m.c.fieldOf(m, owner))
	if err != nil {
		return LockState{}, opError("state of", m.name, wrongKind(err))
	}
	out := LockState{Locked: st.Owners > 0, HoldCount: st.Holds}
	if out.Locked {
		out.Lease = msDuration(st.TTL)
	}
	return out, nil
}

// IsLocked reports whether anyone holds the lock (State(ctx).Locked).
func (m *Mutex) IsLocked(ctx context.Context) (bool, error) {
	st, err := m.State(ctx)
	return st.Locked, err
}
