package scriptlock

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
)

// TestExtendShorterChannelRefused: an Extend to a shorter lease publishes
// the nearer expiry; by an ACL user without the lock's channel (Redis 7
// gives a new user none) it set the shorter lease, then failed at its
// publish: the lock's expiry (and the Redisson fair queue's scores) moved
// with nobody told, and the caller got an error. It is refused before it
// writes (NO_PUBLISH): every key keeps its value and life, and the hold
// keeps its deadline. An Extend to a longer lease, which publishes nothing,
// goes through.
func TestExtendShorterChannelRefused(t *testing.T) {
	t.Parallel()
	n, _, app := newNoChannelClients(t)
	ctx := testCtx(t, 30*time.Second)
	m := mustMutex(t, app, "m", WithLease(time.Minute))
	rw := mustRW(t, app, "rw", WithLease(time.Minute))
	rr := mustRW(t, app, "rr", WithLease(time.Minute))
	queue, timeouts := fairKeys(m.key, true)
	for _, k := range []struct {
		name   string
		lock   func() (context.Context, error)
		extend func(context.Context, time.Duration) error
		queue  func()
	}{
		{"Mutex", func() (context.Context, error) { return m.Lock(ctx) }, func(held context.Context, d time.Duration) error { return m.Extend(ctx, held, d) }, func() {
			// A Redisson fair waiter on the same lock: its score moves
			// with the expiry, and it is told on its own channel.
			score := strconv.FormatInt(time.Now().Add(2*time.Minute).UnixMilli(), 10)
			if err := n.Do(t, "RPUSH", queue, "66666666-0000-4000-8000-000000000000:1").Error(); err != nil {
				t.Fatal(err)
			}
			if err := n.Do(t, "ZADD", timeouts, score, "66666666-0000-4000-8000-000000000000:1").Error(); err != nil {
				t.Fatal(err)
			}
		}},
		{"RWMutex write", func() (context.Context, error) { return rw.Lock(ctx) }, func(held context.Context, d time.Duration) error { return rw.Extend(ctx, held, d) }, nil},
		{"RWMutex read", func() (context.Context, error) { return rr.RLock(ctx) }, func(held context.Context, d time.Duration) error { return rr.RExtend(ctx, held, d) }, nil},
	} {
		held, err := k.lock()
		if err != nil {
			t.Fatalf("%s: lock: %v", k.name, err)
		}
		if k.queue != nil {
			k.queue()
		}
		before := keysState(t, n)
		err = k.extend(held, 2*time.Second)
		if !errors.Is(err, generated.ErrNoPublish) {
			t.Errorf("%s: Extend to a shorter lease by a user without the channel: %v, want generated.ErrNoPublish", k.name, err)
		}
		if diff := sameKeys(before, keysState(t, n)); len(diff) > 0 {
			t.Errorf("%s: Extend refused (%v), yet it wrote: %v", k.name, err, diff)
		}
		if err := k.extend(held, 2*time.Minute); err != nil {
			t.Errorf("%s: Extend to a longer lease: %v", k.name, err)
		}
		// The hold's deadline stayed with the lease in force: it outlives
		// the shorter one asked for.
		select {
		case <-held.Done():
			t.Errorf("%s: the hold ended (%v) after its refused Extend to a shorter lease", k.name, context.Cause(held))
		case <-time.After(2500 * time.Millisecond):
		}
	}
}
