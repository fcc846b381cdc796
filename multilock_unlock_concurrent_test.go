package scriptlock

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// blockFirstRelease is an Observer whose first ReleaseStart waits for
// proceed, once it has closed started.
type blockFirstRelease struct {
	NopObserver
	first            atomic.Bool
	started, proceed chan struct{}
}

func (o *blockFirstRelease) ReleaseStart(ctx context.Context, _ Op) context.Context {
	if o.first.CompareAndSwap(false, true) {
		close(o.started)
		<-o.proceed
	}
	return ctx
}

// TestMultiLockUnlockBesideRefusedUnlock: an Unlock of a MultiLock made
// while another Unlock of the same hold is still releasing its members,
// which refuse it (NO_PUBLISH), waits for that one and asks the members it
// could not release again, as a RedLock's does. It answered ErrNotHeld
// ("already unlocked") at once, while every member went on holding its lock.
func TestMultiLockUnlockBesideRefusedUnlock(t *testing.T) {
	t.Parallel()
	n := redistest.Server(t)
	obs := &blockFirstRelease{started: make(chan struct{}), proceed: make(chan struct{})}
	app := noChannelClients(t, []*redistest.Node{n}, WithObserver(obs))[0]
	a, b := mustMutex(t, app, "a"), mustMutex(t, app, "b")
	ml := mustMulti(t, []Locker{a, b})
	lctx, err := ml.Lock(testCtx(t, 30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	unlock := func() error { return ml.Unlock(lctx) }
	e1, e2 := unlockBesideBlocked(obs.started, obs.proceed, unlock, unlock)
	requireHeld(t, n, true, "every release was refused, yet the lock", a.Key(), b.Key())
	refusedUnlocks(t, e1, e2, "the first Unlock", "an Unlock beside the refused one")
	allowChannels(t, n)
	if err := ml.Unlock(lctx); err != nil {
		t.Fatalf("Unlock again once the user may publish: %v", err)
	}
	requireHeld(t, n, false, "after Unlock again, the lock", a.Key(), b.Key())
}

// TestMultiLockUnlockFromReleaseCallback: an Observer's ReleaseStart,
// called while Unlock releases a MultiLock's members, unlocks the same
// MultiLock again. That Unlock does not wait for the one it is called
// inside: it answers, and both return.
func TestMultiLockUnlockFromReleaseCallback(t *testing.T) {
	t.Parallel()
	n := redistest.Server(t)
	obs := &unlockInRelease{err: make(chan error, 1)}
	c := newTestClient(t, n.Client(t), WithObserver(obs))
	a, b := mustMutex(t, c, "a"), mustMutex(t, c, "b")
	ml := mustMulti(t, []Locker{a, b})
	ctx := testCtx(t, 30*time.Second)
	lctx, err := ml.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	inner := func() error { return ml.Unlock(lctx) }
	obs.unlock.Store(&inner)
	outer := make(chan error, 1)
	go func() { outer <- ml.Unlock(lctx) }()
	select {
	case err := <-outer:
		if err != nil {
			t.Errorf("Unlock: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Unlock, with an Observer's ReleaseStart unlocking the MultiLock again, still running after 10s")
	}
	if err := <-obs.err; !errors.Is(err, ErrNotHeld) {
		t.Errorf("the Unlock from the callback: %v, want ErrNotHeld", err)
	}
	for _, k := range []string{a.Key(), b.Key()} {
		if got, _ := n.Do(t, "EXISTS", k).AsInt64(); got != 0 {
			t.Errorf("%s: still held after Unlock", k)
		}
	}
}

// TestMultiLockOwnerUnlockBesideStartingUnlock: an Unlock with the hold's
// context has taken the hold's unlocking, and an Unlock that only names the
// owner is made before it marks the hold unlocked; the members then refuse
// the release (NO_PUBLISH). The Unlock with the context releases the
// members and reports the refusal, and the one by owner waits for it and
// asks them again. The one by owner marked the hold unlocked first and
// waited for the other, which, finding it unlocked and nothing yet to ask
// again, answered ErrNotHeld, "already unlocked", while every member held
// its lock.
func TestMultiLockOwnerUnlockBesideStartingUnlock(t *testing.T) {
	t.Parallel()
	n := redistest.Server(t)
	app := noChannelClients(t, []*redistest.Node{n})[0]
	a, b := mustMutex(t, app, "a"), mustMutex(t, app, "b")
	ml := mustMulti(t, []Locker{a, b})
	owner := WithOwner(testCtx(t, 30*time.Second), "worker-9")
	lctx, err := ml.Lock(owner)
	if err != nil {
		t.Fatal(err)
	}
	mh := lctx.Value(ml.key).(*multiHeld)
	e1, e2 := unlockBesideStarting(func(f func()) { ml.unlockHook = f }, func() bool { return mh.state.Load() != endNone },
		func() error { return ml.Unlock(lctx) }, func() error { return ml.Unlock(owner) })
	requireHeld(t, n, true, "every release was refused, yet the lock", a.Key(), b.Key())
	refusedUnlocks(t, e1, e2, "the Unlock with the hold's context", "the Unlock by owner beside it")
	allowChannels(t, n)
	if err := ml.Unlock(lctx); err != nil {
		t.Fatalf("Unlock again once the user may publish: %v", err)
	}
	requireHeld(t, n, false, "after Unlock again, the lock", a.Key(), b.Key())
}
