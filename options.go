package scriptlock

import (
	"log/slog"
	"time"
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

// Option configures a Client (New) or overrides the Client's settings for one
// lock handle (Client.Mutex and friends).
type Option func(*config)

type config struct {
	lease          time.Duration // 0: watchdog
	watchdogLease  time.Duration
	watchdogEvery  time.Duration
	prefix         string
	logger         *slog.Logger
	releaseTimeout time.Duration
	guard          bool
	guardTimeout   time.Duration
	sharded        shardedMode
	waiterTimeout  time.Duration // FairMutex queue and RWMutex pending-writer liveness; 0: DefaultWaiterTimeout
	observer       Observer      // nil: none (WithObserver)
	fenceIdle      time.Duration
	redissonFair   time.Duration // > 0: FairMutex uses Redisson's queue protocol with this threadWaitTime
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
		fenceIdle:      DefaultFenceIdle,
	}
}

func (c *config) apply(opts []Option) {
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
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
// by the watchdog. 0 restores watchdog renewal.
func WithLease(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.fail("lease must not be negative, got %s", d)
			return
		}
		c.lease = d
	}
}

// WithWatchdog sets the lease the watchdog keeps on a lock held without an
// explicit lease (default 30 s) and how often it renews it (default lease/3).
func WithWatchdog(lease, every time.Duration) Option {
	return func(c *config) {
		if lease <= 0 || every < 0 || every >= lease {
			c.fail("watchdog needs 0 < every < lease, got lease %s every %s", lease, every)
			return
		}
		c.watchdogLease, c.watchdogEvery = lease, every
	}
}

// WithKeyPrefix puts every key under prefix (for example "app1:"). Lock names
// that Java services share with Redisson need the same prefix there.
func WithKeyPrefix(prefix string) Option {
	return func(c *config) { c.prefix = prefix }
}

// WithLogger sets the logger for background work (renewal failures, lost
// locks). Default: slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l == nil {
			c.fail("nil logger")
			return
		}
		c.logger = l
	}
}

// WithReleaseTimeout bounds Unlock, which runs detached from its caller's
// context so a cancelled request still releases its lock. Default 5 s.
func WithReleaseTimeout(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			c.fail("release timeout must be positive, got %s", d)
			return
		}
		c.releaseTimeout = d
	}
}

// WithFailoverGuard turns the failover guard on or off (default on) and sets
// how long an acquisition waits for a replica's acknowledgement. With the
// guard on and replicas connected to the primary, an acquisition no replica
// acknowledged within timeout is undone and fails with ErrNotReplicated, so a
// failover right after it cannot hand the same lock to a second owner.
func WithFailoverGuard(on bool, timeout time.Duration) Option {
	return func(c *config) {
		if on && timeout <= 0 {
			c.fail("failover guard timeout must be positive, got %s", timeout)
			return
		}
		c.guard = on
		if on {
			c.guardTimeout = timeout
		}
	}
}

// WithFenceIdle sets how long a lock's fencing-token counter
// (redisson_lock_token:{name}) lives from its start (default 7 days), so lock
// names that are no longer used do not leave keys behind for longer than d.
// Grants do not extend it (that would cost every grant a PEXPIRE). A counter
// starts at the server's clock in microseconds, so the one that follows an
// expired counter is above every token that counter handed out: tokens stay
// strictly increasing as long as a counter hands out fewer than one token per
// microsecond of its life and the server's clock does not step back by more
// than the slack that leaves (d minus one microsecond per token handed out).
func WithFenceIdle(d time.Duration) Option {
	return func(c *config) {
		if d < time.Second {
			c.fail("fence idle time must be at least 1s, got %s", d)
			return
		}
		c.fenceIdle = d
	}
}

// WithShardedPubSub forces sharded pub/sub (SSUBSCRIBE/SPUBLISH) on or off.
// By default it is used on Redis Cluster when the server supports it.
func WithShardedPubSub(on bool) Option {
	return func(c *config) {
		if on {
			c.sharded = shardedOn
		} else {
			c.sharded = shardedOff
		}
	}
}
