package scriptlock

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"
)

// TestReleaseNotHeldBesideWaitersRefusedChannel: an owner whose lock was
// force-unlocked and taken by another releases it with waiters queued, as a
// user without the lock's channels. The usual release (MutexReleaseLast,
// FairReleaseLast) checked the waiters' channels before it looked for the
// owner, and answered NO_PUBLISH where its retry (MutexRelease, FairRelease)
// and the uncontended release answer "not held": Unlock failed with
// ErrNoPublish instead of ErrNotHeld, for a release that had nothing to
// give up and nothing to send.
func TestReleaseNotHeldBesideWaitersRefusedChannel(t *testing.T) {
	t.Parallel()
	n, admin, app := newNoChannelClients(t)
	ctx := testCtx(t, 30*time.Second)
	do := func(args ...string) {
		t.Helper()
		if err := n.Do(t, args...).Error(); err != nil {
			t.Fatal(err)
		}
	}
	later := strconv.FormatInt(time.Now().Add(time.Minute).UnixMilli(), 10)
	m, am := mustMutex(t, app, "m"), mustMutex(t, admin, "m")
	f, af := mustFair(t, app, "f"), mustFair(t, admin, "f")
	for _, k := range []struct {
		name           string
		lock, takeOver func(context.Context) (context.Context, error)
		force          func(context.Context) (bool, error)
		unlock         func(context.Context) error
		queue          func()
	}{
		{"Mutex", m.Lock, am.Lock, am.ForceUnlock, m.Unlock, func() {
			do("ZADD", m.waiters, "1000", "55555555-0000-4000-8000-000000000000:1")
		}},
		{"FairMutex", f.Lock, af.Lock, af.ForceUnlock, f.Unlock, func() {
			do("RPUSH", f.queue, "33333333-0000-4000-8000-000000000000:1")
			do("ZADD", f.timeouts, later, "33333333-0000-4000-8000-000000000000:1")
		}},
	} {
		held, err := k.lock(ctx)
		if err != nil {
			t.Fatalf("%s: lock: %v", k.name, err)
		}
		if ok, err := k.force(ctx); !ok || err != nil {
			t.Fatalf("%s: ForceUnlock by another Client: %v %v", k.name, ok, err)
		}
		if _, err := k.takeOver(ctx); err != nil {
			t.Fatalf("%s: lock by another owner: %v", k.name, err)
		}
		k.queue()
		if err := k.unlock(held); !errors.Is(err, ErrNotHeld) {
			t.Errorf("%s: Unlock of a lock another owner holds, waiters queued, by a user without the channels: %v, want ErrNotHeld", k.name, err)
		}
	}
}
