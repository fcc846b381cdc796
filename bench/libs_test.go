package bench

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	mathrand "math/rand/v2"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	redsyncrueidis "github.com/go-redsync/redsync/v4/redis/rueidis"
	goredislib "github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidiscompat"
	"github.com/redis/rueidis/rueidislock"

	"github.com/scriptlock/scriptlock"
)

// locker takes the named lock, waiting for it, and returns its release.
type locker func(ctx context.Context, name string) (release func() error, err error)

// lockLib is one library under test. open builds, for one simulated process,
// its own client and connections (closed when the benchmark run ends) and
// returns how that process takes a lock.
type lockLib struct {
	name string
	open func(b *testing.B, addr, prefix string) locker
}

// lease is the expiry given to the libraries that take one per call; the
// others keep their defaults (scriptlock: 30 s with a watchdog; rueidislock:
// 5 s, extended every 2.5 s).
const lease = 30 * time.Second

// libs in the order of the first round; later rounds rotate it (see -rotate).
var libs = []lockLib{
	{"setnx-cas", openSetNX},
	{"scriptlock.Mutex", openScriptlock(false)},
	{"scriptlock.FairMutex", openScriptlock(true)},
	{"scriptlock.LeanMutex", openScriptlockLean},
	{"redsync", openRedsync},
	{"rueidislock", openRueidislock},
	{"bsm-redislock", openRedislock},
}

var flushDelay = flag.Duration("flush-delay", 0, "MaxFlushDelay of every rueidis client the libraries use (bsm/redislock is on go-redis and has none)")

func newRueidis(b *testing.B, addr string) rueidis.Client {
	b.Helper()
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true, MaxFlushDelay: *flushDelay})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(rc.Close)
	return rc
}

// openScriptlock: Mutex or FairMutex with default options (watchdog lease,
// notified waiting), one rueidis client per process.
func openScriptlock(fair bool) func(*testing.B, string, string) locker {
	return func(b *testing.B, addr, prefix string) locker {
		c, err := scriptlock.New(newRueidis(b, addr), scriptlock.WithKeyPrefix(prefix))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = c.Close() })
		if fair {
			return func(ctx context.Context, name string) (func() error, error) {
				f, err := c.FairMutex(name)
				if err != nil {
					return nil, err
				}
				lctx, err := f.Lock(ctx)
				if err != nil {
					return nil, err
				}
				return func() error { return f.Unlock(lctx) }, nil
			}
		}
		return func(ctx context.Context, name string) (func() error, error) {
			m, err := c.Mutex(name)
			if err != nil {
				return nil, err
			}
			lctx, err := m.Lock(ctx)
			if err != nil {
				return nil, err
			}
			return func() error { return m.Unlock(lctx) }, nil
		}
	}
}

// openScriptlockLean: LeanMutex with default options (watchdog lease, backoff
// polling), one rueidis client per process.
func openScriptlockLean(b *testing.B, addr, prefix string) locker {
	c, err := scriptlock.New(newRueidis(b, addr), scriptlock.WithKeyPrefix(prefix))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	return func(ctx context.Context, name string) (func() error, error) {
		l, err := c.LeanMutex(name)
		if err != nil {
			return nil, err
		}
		lctx, err := l.Lock(ctx)
		if err != nil {
			return nil, err
		}
		return func() error { return l.Unlock(lctx) }, nil
	}
}

// openRueidislock: one key per lock (KeyMajority 1), waiting notified by
// client-side caching invalidations.
func openRueidislock(b *testing.B, addr, prefix string) locker {
	l, err := rueidislock.NewLocker(rueidislock.LockerOption{
		ClientOption:   rueidis.ClientOption{InitAddress: []string{addr}, MaxFlushDelay: *flushDelay},
		KeyPrefix:      prefix + "rueidislock",
		KeyMajority:    1,
		NoLoopTracking: true,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(l.Close)
	return func(ctx context.Context, name string) (func() error, error) {
		_, cancel, err := l.WithContext(ctx, name)
		if err != nil {
			return nil, err
		}
		return func() error { cancel(); return nil }, nil
	}
}

// openRedsync: redsync on a rueidis client, one node, its default retry delay
// (random 50-250 ms) and enough tries never to give up.
func openRedsync(b *testing.B, addr, prefix string) locker {
	rs := redsync.New(redsyncrueidis.NewPool(rueidiscompat.NewAdapter(newRueidis(b, addr))))
	return func(ctx context.Context, name string) (func() error, error) {
		m := rs.NewMutex(prefix+name, redsync.WithExpiry(lease), redsync.WithTries(1<<20))
		if err := m.LockContext(ctx); err != nil {
			return nil, err
		}
		return func() error {
			ok, err := m.UnlockContext(ctx)
			if err == nil && !ok {
				err = errors.New("redsync: lock lost before unlock")
			}
			return err
		}, nil
	}
}

// openRedislock: bsm/redislock on go-redis, polling every 10 ms.
func openRedislock(b *testing.B, addr, prefix string) locker {
	client := goredislib.NewClient(&goredislib.Options{Addr: addr, PoolSize: 128})
	b.Cleanup(func() { _ = client.Close() })
	lk := redislock.New(client)
	opts := &redislock.Options{RetryStrategy: redislock.LinearBackoff(10 * time.Millisecond)}
	return func(ctx context.Context, name string) (func() error, error) {
		l, err := lk.Obtain(ctx, prefix+name, lease, opts)
		if err != nil {
			return nil, err
		}
		return func() error { return l.Release(ctx) }, nil
	}
}

// casDelete deletes the lock key only while it still holds the caller's value.
var casDelete = rueidis.NewLuaScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

// openSetNX is the floor every library is measured against: SET key <unique
// value> NX PX to take, the compare-and-delete script to release, and under
// contention a retry after a jittered delay doubling from 1 ms to 16 ms. No
// lease renewal, no fencing, no re-entry, no notification.
func openSetNX(b *testing.B, addr, prefix string) locker {
	rc := newRueidis(b, addr)
	owner := rand.Text() + ":"
	var seq atomic.Uint64
	return func(ctx context.Context, name string) (func() error, error) {
		key := prefix + name
		value := owner + strconv.FormatUint(seq.Add(1), 10)
		delay := time.Millisecond
		for {
			err := rc.Do(ctx, rc.B().Set().Key(key).Value(value).Nx().Px(lease).Build()).Error()
			if err == nil {
				break
			}
			if !rueidis.IsRedisNil(err) {
				return nil, err
			}
			t := time.NewTimer(delay/2 + mathrand.N(delay))
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, ctx.Err()
			case <-t.C:
			}
			delay = min(2*delay, 16*time.Millisecond)
		}
		return func() error {
			n, err := casDelete.Exec(ctx, rc, []string{key}, []string{value}).AsInt64()
			if err == nil && n != 1 {
				err = fmt.Errorf("setnx-cas: %s lost before release", key)
			}
			return err
		}, nil
	}
}
