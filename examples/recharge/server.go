package recharge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// LockPrefix is the prefix of the order locks: the HTTP and the gRPC front
// end both lock order:<id>, so they exclude each other.
const LockPrefix = "order:"

// DefaultWait is how long a request waits for its order's lock.
const DefaultWait = 5 * time.Second

// Config wires the front ends.
type Config struct {
	// Service runs the recharge flow. Required.
	Service *Service
	// Locks creates the order locks. Required unless Service.Unsafe.
	Locks *scriptlock.Client
	// LockOptions apply to every order lock (for example scriptlock.WithLease).
	LockOptions []scriptlock.LockOption
	// Wait is how long a request waits for a held order lock before answering
	// 409 / Aborted. Default DefaultWait.
	Wait time.Duration
	// NoWait makes a single attempt at the order's lock: a request for an
	// order whose lock is held answers 409 / Aborted at once. Wait must then
	// be zero.
	NoWait bool
	// Idempotency, when set, gives both front ends Idempotency-Key support
	// (HTTP header Idempotency-Key, gRPC metadata idempotency-key).
	Idempotency *idempotency.Store
	// Logger for middleware warnings and failed recharges (whose detail
	// clients do not get). Default slog.Default().
	Logger *slog.Logger
}

// LockStats counts what requests met at the order locks.
type LockStats struct {
	// Acquired: locks taken (immediately or after waiting).
	Acquired int64
	// Waited: requests that found the lock held and waited for it.
	Waited int64
	// Contended: requests still locked out when the wait ran out (409 / Aborted).
	Contended int64
}

// Server holds the wiring both front ends share.
type Server struct {
	cfg   Config
	locks *orderLocks
	stats lockCounters
}

// NewServer checks cfg and returns the server.
func NewServer(cfg Config) (*Server, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg}
	if cfg.Locks != nil {
		s.locks = &orderLocks{client: cfg.Locks, opts: cfg.LockOptions, stats: &s.stats}
		// Invalid lock options fail here, not on every request.
		if _, err := cfg.Locks.Mutex("probe", cfg.LockOptions...); err != nil {
			return nil, fmt.Errorf("recharge: lock options: %w", err)
		}
	}
	return s, nil
}

// Service returns the recharge service.
func (s *Server) Service() *Service { return s.cfg.Service }

// LockStats returns the lock counters of both front ends.
func (s *Server) LockStats() LockStats { return s.stats.snapshot() }

func (c *Config) check() error {
	if c.Service == nil || c.Service.Store == nil {
		return errors.New("recharge: Config.Service with a Store is required")
	}
	if c.Locks == nil && !c.Service.Unsafe {
		return errors.New("recharge: Config.Locks is required unless Service.Unsafe")
	}
	if c.Wait < 0 {
		// Refused here: the front ends' middleware would panic on it.
		return fmt.Errorf("recharge: negative Config.Wait %s", c.Wait)
	}
	if c.NoWait && c.Wait != 0 {
		return fmt.Errorf("recharge: Config.NoWait with Config.Wait %s", c.Wait)
	}
	if c.Wait == 0 && !c.NoWait {
		c.Wait = DefaultWait
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return nil
}

// orderLocks hands the middleware one Mutex per order and counts waits.
type orderLocks struct {
	client *scriptlock.Client
	opts   []scriptlock.LockOption
	stats  *lockCounters
}

type lockCounters struct{ acquired, waited, contended atomic.Int64 }

func (c *lockCounters) snapshot() LockStats {
	return LockStats{c.acquired.Load(), c.waited.Load(), c.contended.Load()}
}

func (l *orderLocks) lock(key string) (scriptlock.Locker, error) {
	m, err := l.client.Mutex(key, l.opts...)
	if err != nil {
		return nil, err
	}
	return &countingLocker{Locker: m, c: l.stats}, nil
}

// countingLocker makes one attempt first, so that a request that had to wait
// is counted; only then does it wait (notified by the lock's release).
type countingLocker struct {
	scriptlock.Locker
	c *lockCounters
}

func (l *countingLocker) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	start := time.Now()
	lctx, err := l.Locker.TryLock(ctx, 0)
	if err == nil {
		l.c.acquired.Add(1)
		return lctx, nil
	}
	if errors.Is(err, scriptlock.ErrNotAcquired) && wait > 0 {
		l.c.waited.Add(1)
		lctx, err = l.Locker.TryLock(ctx, max(wait-time.Since(start), 0))
		if err == nil {
			l.c.acquired.Add(1)
			return lctx, nil
		}
	}
	// A wait whose last attempt Redis did not answer saw no holder: the
	// middleware answers it 503 (Redis unavailable), not 409.
	var na *scriptlock.NotAcquiredError
	if errors.Is(err, scriptlock.ErrNotAcquired) && (!errors.As(err, &na) || !na.Unanswered) {
		l.c.contended.Add(1)
	}
	return nil, err
}

// parseOrderID reads a positive decimal order id and returns it with its
// canonical form, the lock key: "007" and "7" lock the same order.
func parseOrderID(s string) (int64, string, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, "", fmt.Errorf("order id %q is not a positive integer", s)
	}
	return id, strconv.FormatInt(id, 10), nil
}
