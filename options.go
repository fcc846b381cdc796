package scriptlock

import (
	"log/slog"
	"time"

	"github.com/scriptlock/scriptlock/internal/layout"
)

// Defaults, as in Redisson.
const (
	DefaultLease          = 30 * time.Second
	DefaultReleaseTimeout = 5 * time.Second
	DefaultGuardTimeout   = 100 * time.Millisecond
	// DefaultFenceIdle is how long a lock's fencing-token counter lives
	// before it starts again from the server's clock.
	DefaultFenceIdle = 7 * 24 * time.Hour
)

// Option configures a Client (New). Options come in levels, so an option
// that cannot apply does not compile:
//
//   - Option configures a Client (New). WithKeyPrefix, WithLogger,
//     WithShardedPubSub and WithObserver are Client-wide and only Options:
//     given to a handle constructor they are a compile error.
//   - LockOption configures one handle (Client.Mutex and the other handle
//     constructors, NewRedLock).
//   - SharedOption is both: given to New it sets the Client's default for its
//     handles, given to a handle it overrides that default for the handle.
//     WithLease, WithWatchdog, WithReleaseTimeout, WithFailoverGuard,
//     WithGuardReplicas, WithFenceIdle, WithWaiterTimeout, WithRedissonFairQueue and WithFencing
//     are SharedOptions.
//   - MultiLockOption (WithMemberWait) and RedLockOption (WithNodeTimeout,
//     WithClockDrift) belong to one composite lock each. Every LockOption is
//     also a RedLockOption: it configures the lock on each RedLock node.
//
// A SharedOption that has no meaning for a kind of handle (WithLease on a
// Semaphore, WithRedissonFairQueue on a Mutex) makes that handle's
// constructor fail with ErrInvalidArgument, rather than being ignored.
type Option interface {
	applyClient(*config)
}

// LockOption configures one lock handle: Client.Mutex and the other handle
// constructors, and the lock on every node of NewRedLock.
type LockOption interface {
	RedLockOption
	applyLock(*config, kind)
}

// SharedOption is valid for New (the Client's default for its handles) and
// for a handle constructor (an override for that handle).
type SharedOption interface {
	Option
	LockOption
}

// kind is a kind of handle, for the options that only some kinds take.
type kind uint16

const (
	kindMutex kind = 1 << iota
	kindFairMutex
	kindRWMutex
	kindSemaphore
	kindPermitSemaphore
	kindLatch
	kindRedLock
	kindLeanMutex

	// kindsLock: the owner-held locks, which lease, renew, guard and fence.
	kindsLock = kindMutex | kindFairMutex | kindRWMutex | kindRedLock | kindLeanMutex
	// kindsGuard: the kinds whose acquisitions the failover guard covers.
	kindsGuard = kindsLock | kindSemaphore | kindPermitSemaphore
)

func (k kind) String() string {
	switch k {
	case kindMutex:
		return "mutex"
	case kindFairMutex:
		return "fair mutex"
	case kindRWMutex:
		return "rwmutex"
	case kindSemaphore:
		return "semaphore"
	case kindPermitSemaphore:
		return "permit semaphore"
	case kindLatch:
		return "latch"
	case kindRedLock:
		return "redlock"
	case kindLeanMutex:
		return "lean mutex"
	}
	return "lock"
}

// clientOption is an Option only.
type clientOption func(*config)

func (o clientOption) applyClient(c *config) { o(c) }

// sharedOption is a SharedOption: name and kinds let a handle constructor
// refuse it for a kind it has no meaning for.
type sharedOption struct {
	name  string
	kinds kind
	set   func(*config)
}

func (o sharedOption) applyClient(c *config) { o.set(c) }

func (o sharedOption) applyLock(c *config, k kind) {
	if o.kinds&k == 0 {
		c.fail("%s does not apply to a %s", o.name, k)
		return
	}
	o.set(c)
}

func (o sharedOption) applyRedLock(r *redLockConfig) {
	r.node = append(r.node, o)
	r.releaseSet = r.releaseSet || o.name == "WithReleaseTimeout"
}

type config struct {
	lease          time.Duration // 0: watchdog
	watchdogLease  time.Duration
	watchdogEvery  time.Duration
	prefix         string
	logger         *slog.Logger
	releaseTimeout time.Duration
	guard          bool
	guardTimeout   time.Duration
	guardReplicas  int // WithGuardReplicas: acknowledgements wanted, or GuardAllReplicas
	sharded        shardedMode
	waiterTimeout  time.Duration // FairMutex queue and RWMutex pending-writer liveness; 0: DefaultWaiterTimeout
	observer       Observer      // nil: none (WithObserver)
	fenceIdle      time.Duration
	redissonFair   time.Duration // > 0: FairMutex uses Redisson's queue protocol with this threadWaitTime
	leanFence      bool          // LeanMutex hands out fencing tokens (WithFencing)
	err            error
}

type shardedMode int

const (
	shardedAuto shardedMode = iota
	shardedOn
	shardedOff
)

func defaultConfig() config {
	return config{
		watchdogLease:  DefaultLease,
		logger:         slog.Default(),
		releaseTimeout: DefaultReleaseTimeout,
		guard:          true,
		guardTimeout:   DefaultGuardTimeout,
		guardReplicas:  1,
		fenceIdle:      DefaultFenceIdle,
	}
}

func (c *config) apply(opts []Option) {
	for _, o := range opts {
		if o != nil {
			o.applyClient(c)
		}
	}
	c.finish()
}

// applyLock applies a handle's options over the Client's settings.
func (c *config) applyLock(k kind, opts []LockOption) {
	for _, o := range opts {
		if o != nil {
			o.applyLock(c, k)
		}
	}
	c.finish()
}

func (c *config) finish() {
	if c.watchdogEvery == 0 {
		c.watchdogEvery = c.watchdogLease / 3
	}
}

func (c *config) fail(format string, args ...any) {
	if c.err == nil {
		c.err = invalidf(format, args...)
	}
}

// WithLease makes locks expire on their own after d instead of being renewed
// by the watchdog (d within the 5ms + 2% clock-drift allowance, which would
// end each hold as it is granted, or longer than MaxLease, is
// ErrInvalidArgument). 0 restores watchdog renewal. For Mutex, FairMutex,
// RWMutex, LeanMutex and RedLock (its lease and validity on every node);
// Extend gives such a hold a new lease.
func WithLease(d time.Duration) SharedOption {
	return sharedOption{"WithLease", kindsLock, func(c *config) {
		if d < 0 {
			c.fail("lease must not be negative, got %s", d)
			return
		}
		if err := checkLease(d); d > 0 && err != nil {
			if c.err == nil {
				c.err = err
			}
			return
		}
		c.lease = d
	}}
}

// minWatchdogEvery is the shortest renewal interval WithWatchdog takes.
const minWatchdogEvery = time.Millisecond

// WithWatchdog sets the lease the watchdog keeps on a lock held without an
// explicit lease (default 30 s) and how often it renews it (default lease/3).
// A hold counts as lost once its lease, less the clock-drift allowance
// (5ms + 2%), has passed without a confirmed renewal, so every (or lease/3
// for 0) must be shorter than that, a given every at least 1ms (a shorter
// one renews each held lock back to back, a script per round trip), and
// lease at most MaxLease: ErrInvalidArgument otherwise.
// For Mutex, FairMutex, RWMutex, LeanMutex and RedLock.
func WithWatchdog(lease, every time.Duration) SharedOption {
	return sharedOption{"WithWatchdog", kindsLock, func(c *config) {
		renew := every
		if renew == 0 {
			renew = lease / 3
		}
		if lease > MaxLease {
			// Said as such: the message below asks for a longer lease.
			c.fail("watchdog lease %s is longer than MaxLease (%s)", lease, MaxLease)
			return
		}
		if every > 0 && every < minWatchdogEvery {
			c.fail("watchdog renewals every %s: at least %s (0: lease/3)", every, minWatchdogEvery)
			return
		}
		if checkLease(lease) != nil || every < 0 || renew >= lease-lossMargin(lease) {
			c.fail("watchdog needs a lease beyond the clock-drift allowance (5ms + 2%%) and 0 <= every < lease less that allowance (0: lease/3), got lease %s every %s", lease, every)
			return
		}
		c.watchdogLease, c.watchdogEvery = lease, every
	}}
}

// WithKeyPrefix puts every key of the Client's handles under prefix (for
// example "app1:"). Lock names that Java services share with Redisson need
// the same prefix there. Client-wide: use a Client per prefix. A prefix with
// a '{' but no complete, non-empty hash tag after it, or with a '}' and no
// '{', is ErrInvalidArgument: a name would complete its tag (choosing the
// hash slot) or, for most names, be refused.
func WithKeyPrefix(prefix string) Option {
	return clientOption(func(c *config) {
		if fault := layout.PrefixTagFault(prefix); fault != "" {
			c.fail("WithKeyPrefix %q: %s", prefix, fault)
			return
		}
		c.prefix = prefix
	})
}

// WithLogger sets the logger for background work (renewal failures, lost
// locks). Default: slog.Default().
func WithLogger(l *slog.Logger) Option {
	return clientOption(func(c *config) {
		if l == nil {
			c.fail("nil logger")
			return
		}
		c.logger = l
	})
}

// WithReleaseTimeout bounds Unlock (and a semaphore's Release), which runs
// detached from its caller's context so a cancelled request still releases
// its lock. Default 5 s; a RedLock's Unlock on each node is bounded by its
// node timeout (WithNodeTimeout) unless WithReleaseTimeout is given to
// NewRedLock itself (the give-backs nobody waits for, of a failed attempt's
// grants and of a lost RedLock's nodes, keep the Client's). Given to New,
// it also bounds every CountDownLatch's CountDown, which runs detached the
// same way; a latch handle does not take it. For every kind but
// CountDownLatch. The records a retried release reads (of a nested Unlock,
// of a Mutex waiter that gave up) live as long, at least 1 s, so that a
// repeat within it finds them: a timeout of hours leaves them for hours.
func WithReleaseTimeout(d time.Duration) SharedOption {
	return sharedOption{"WithReleaseTimeout", kindsLock | kindSemaphore | kindPermitSemaphore, func(c *config) {
		if d <= 0 {
			c.fail("release timeout must be positive, got %s", d)
			return
		}
		c.releaseTimeout = d
	}}
}

// WithFailoverGuard turns the failover guard on or off (default on) and sets
// how long an acquisition waits for a replica's acknowledgement. With the
// guard on and replicas online on the primary (in sync: one still in its
// initial sync is not waited for), an acquisition no replica
// acknowledged within timeout is undone and fails with ErrNotReplicated, so a
// failover right after it cannot hand the same lock, or the same permits, to
// a second owner.
// Watchdog renewals, Extend and an RWMutex read release that leaves read
// holds wait the same way, and move the lock context's deadline later only
// once a replica acknowledged them (an Extend that none did fails with
// ErrNotReplicated); WithGuardReplicas makes it wait for more replicas. For
// Mutex, FairMutex, RWMutex (both sides), LeanMutex, RedLock (on each
// node), Semaphore (its acquisitions and DrainPermits) and PermitSemaphore
// (its acquisitions and Extend).
func WithFailoverGuard(on bool, timeout time.Duration) SharedOption {
	return sharedOption{"WithFailoverGuard", kindsGuard, func(c *config) {
		if on && timeout <= 0 {
			c.fail("failover guard timeout must be positive, got %s", timeout)
			return
		}
		c.guard = on
		if on {
			c.guardTimeout = timeout
		}
	}}
}

// GuardAllReplicas, given to WithGuardReplicas, makes the failover guard
// wait for every replica online on the lock's primary.
const GuardAllReplicas = -1

// WithGuardReplicas sets how many replicas the failover guard waits for
// (default 1). With n of 1 or more, a guarded write (an acquisition, a
// watchdog renewal, an Extend, an RWMutex read release that leaves read
// holds) counts as acknowledged once the smaller of n and the number of
// replicas online on the lock's primary acknowledged it; with
// GuardAllReplicas, once every one of them did. WAIT 1 hears from one
// replica, and a failover may promote another that never got the write:
// waiting for all of them closes that gap, at the price of failing with
// ErrNotReplicated while any replica the primary still lists as online
// lags or is stalled (the count is taken again every few seconds, and
// within about a second after a wait that fell short, so that a replica
// gone fails writes for no longer). A replica that comes online after the
// count is waited for once the count is taken again: with GuardAllReplicas,
// or n above the count, a call has it taken again once it is a second old,
// so a Client calling at least once a second waits for it from about a
// second after it came online. 0 and values
// below -1 are ErrInvalidArgument. The count and the wait are per primary:
// per Cluster shard (a slot moved to another shard takes that primary's
// count at the first MOVED), per RedLock node. It has no effect with the guard off
// (WithFailoverGuard). For Mutex, FairMutex, RWMutex (both sides),
// LeanMutex, RedLock (on each node), Semaphore and PermitSemaphore.
func WithGuardReplicas(n int) SharedOption {
	return sharedOption{"WithGuardReplicas", kindsGuard, func(c *config) {
		if n == 0 || n < GuardAllReplicas {
			c.fail("guard replicas must be at least 1 or GuardAllReplicas (-1), got %d", n)
			return
		}
		c.guardReplicas = n
	}}
}

// guardAcks is how many acknowledgements a guarded write needs from a
// primary with counted (> 0) replicas, for want (WithGuardReplicas).
func guardAcks(want, counted int) int {
	if want == GuardAllReplicas || want > counted {
		return counted
	}
	return want
}

// WithFenceIdle sets how long a lock's fencing-token counter
// (redisson_lock_token:{name}) lives from its start (default 7 days; below 1s
// is ErrInvalidArgument), so lock names that are no longer used do not leave
// keys behind for longer than d.
// Grants do not extend it (that would cost every grant a PEXPIRE). A counter
// starts at the server's clock in microseconds, so the one that follows an
// expired counter is above every token that counter handed out: tokens stay
// strictly increasing as long as a counter hands out fewer than one token per
// microsecond of its life and the server's clock does not step back by more
// than the slack that leaves (d minus one microsecond per token handed out).
// For Mutex, FairMutex, RWMutex, LeanMutex (whose counter is used with
// WithFencing or WithOwner) and RedLock.
// A short d makes likelier what a long one makes rare: a counter that expires
// between a shared owner's new grant and the arrival of a late release or
// renewal of its earlier hold lets that call act on the new hold (see
// docs/guarantees.md, "A late release does not release a newer hold").
func WithFenceIdle(d time.Duration) SharedOption {
	return sharedOption{"WithFenceIdle", kindsLock, func(c *config) {
		if d < time.Second {
			c.fail("fence idle time must be at least 1s, got %s", d)
			return
		}
		c.fenceIdle = d
	}}
}

// WithShardedPubSub forces sharded pub/sub (SSUBSCRIBE/SPUBLISH) on or off.
// By default it is used on Redis Cluster when the server supports it, and a
// Client that finds the server refuses it switches to plain pub/sub. Forced
// on, a server's refusal is the error: a wait fails with it (through
// errors.As, a *rueidis.RedisError) when it subscribes, as does a call whose
// script publishes.
func WithShardedPubSub(on bool) Option {
	return clientOption(func(c *config) {
		if on {
			c.sharded = shardedOn
		} else {
			c.sharded = shardedOff
		}
	})
}

// WithFencing makes a LeanMutex hand out a fencing token with every
// acquisition (Fence, FenceOf), from the same counter a Mutex of that name
// uses. It costs the acquisition a script (SET plus INCR) instead of a plain
// SET. The other locks always hand out tokens. For LeanMutex only.
func WithFencing() SharedOption {
	return sharedOption{"WithFencing", kindLeanMutex, func(c *config) { c.leanFence = true }}
}
