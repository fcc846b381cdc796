package scriptlock

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
)

// TestReleaseChannelRefusedKeepsLock: a user allowed the keys but not the
// lock's channels (Redis 7 gives a new user none) released a lock and failed
// at its PUBLISH, after the delete: the caller got an error with the lock
// gone, and nobody waiting was told. The release and the force unlock are
// refused before they write (NO_PUBLISH), and the lock stays held.
func TestReleaseChannelRefusedKeepsLock(t *testing.T) {
	t.Parallel()
	n, _, app := newNoChannelClients(t)
	ctx := testCtx(t, 30*time.Second)
	type kind struct {
		name   string
		key    string
		lock   func() (context.Context, error)
		unlock func(context.Context) error
		force  func() (bool, error)
		queue  func() // registers a live waiter the release tells, if it tells one
	}
	m := mustMutex(t, app, "m")
	mc := mustMutex(t, app, "mc")
	f := mustFair(t, app, "f")
	fj := mustFair(t, app, "fj")
	rf := mustFair(t, app, "rf", WithRedissonFairQueue(time.Minute))
	rw := mustRW(t, app, "rw")
	rr := mustRW(t, app, "rr")
	kinds := []kind{
		{"Mutex", m.key, func() (context.Context, error) { return m.Lock(ctx) }, m.Unlock, func() (bool, error) { return m.ForceUnlock(ctx) }, nil},
		// A waiter of another client, woken by name on its wake channel.
		{"Mutex, contended", mc.key, func() (context.Context, error) { return mc.Lock(ctx) }, mc.Unlock, func() (bool, error) { return mc.ForceUnlock(ctx) }, func() {
			if err := n.Do(t, "ZADD", mc.waiters, "1000", "55555555-0000-4000-8000-000000000000:1").Error(); err != nil {
				t.Fatal(err)
			}
		}},
		// A FairMutex's release tells only the queue's head: one waits.
		{"FairMutex", f.m.key, func() (context.Context, error) { return f.Lock(ctx) }, f.Unlock, func() (bool, error) { return f.ForceUnlock(ctx) }, func() {
			const field = "33333333-0000-4000-8000-000000000000:1"
			deadline := strconv.FormatInt(time.Now().Add(time.Minute).UnixMilli(), 10)
			if err := n.Do(t, "RPUSH", f.queue, field).Error(); err != nil {
				t.Fatal(err)
			}
			if err := n.Do(t, "ZADD", f.timeouts, deadline, field).Error(); err != nil {
				t.Fatal(err)
			}
		}},
		// A Java RFairLock thread queued beside our queue: the release
		// tells it on <channel>:<thread>.
		{"FairMutex, a Java thread queued", fj.m.key, func() (context.Context, error) { return fj.Lock(ctx) }, fj.Unlock, func() (bool, error) { return fj.ForceUnlock(ctx) }, func() {
			if err := n.Do(t, "RPUSH", fj.javaQueue, "66666666-0000-4000-8000-000000000000:1").Error(); err != nil {
				t.Fatal(err)
			}
		}},
		// Redisson's fair queue: its release tells the head on <channel>:<field>.
		{"FairMutex (Redisson's queue)", rf.m.key, func() (context.Context, error) { return rf.Lock(ctx) }, rf.Unlock, func() (bool, error) { return rf.ForceUnlock(ctx) }, func() {
			const field = "44444444-0000-4000-8000-000000000000:1"
			score := strconv.FormatInt(time.Now().Add(time.Minute).UnixMilli(), 10)
			if err := n.Do(t, "RPUSH", rf.queue, field).Error(); err != nil {
				t.Fatal(err)
			}
			if err := n.Do(t, "ZADD", rf.timeouts, score, field).Error(); err != nil {
				t.Fatal(err)
			}
		}},
		{"RWMutex write", rw.key, func() (context.Context, error) { return rw.Lock(ctx) }, rw.Unlock, func() (bool, error) { return rw.ForceUnlock(ctx) }, nil},
		{"RWMutex read", rr.key, func() (context.Context, error) { return rr.RLock(ctx) }, rr.RUnlock, func() (bool, error) { return rr.ForceUnlock(ctx) }, nil},
	}
	for _, k := range kinds {
		held, err := k.lock()
		if err != nil {
			t.Fatalf("%s: lock: %v", k.name, err)
		}
		if k.queue != nil {
			k.queue()
		}
		err = k.unlock(held)
		if !errors.Is(err, generated.ErrNoPublish) {
			t.Errorf("%s: Unlock by a user without the channels: %v, want generated.ErrNoPublish", k.name, err)
		}
		if got, _ := n.Do(t, "EXISTS", k.key).AsInt64(); got != 1 {
			t.Errorf("%s: Unlock refused (%v), yet the lock is gone", k.name, err)
		}
		ok, err := k.force()
		if ok || !errors.Is(err, generated.ErrNoPublish) {
			t.Errorf("%s: ForceUnlock by a user without the channels: %v %v, want false, generated.ErrNoPublish", k.name, ok, err)
		}
		if got, _ := n.Do(t, "EXISTS", k.key).AsInt64(); got != 1 {
			t.Errorf("%s: ForceUnlock refused (%v), yet the lock is gone", k.name, err)
		}
	}
}
