package scriptlock

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
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
	if err := n.Do(t, "ACL", "SETUSER", "app", "on", ">pw", "~*", "resetchannels", "+@all").Error(); err != nil {
		t.Fatalf("ACL SETUSER: %v", err)
	}
	obs := &blockFirstRelease{started: make(chan struct{}), proceed: make(chan struct{})}
	app := newTestClient(t, n.Client(t, func(o *rueidis.ClientOption) { o.Username, o.Password = "app", "pw" }), sharedPrefix(t), WithObserver(obs))
	a, b := mustMutex(t, app, "a"), mustMutex(t, app, "b")
	ml := mustMulti(t, []Locker{a, b})
	ctx := testCtx(t, 30*time.Second)
	lctx, err := ml.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	firstErr := make(chan error, 1)
	go func() { firstErr <- ml.Unlock(lctx) }()
	<-obs.started
	secondErr := make(chan error, 1)
	go func() { secondErr <- ml.Unlock(lctx) }()
	time.Sleep(100 * time.Millisecond)
	close(obs.proceed)
	e1, e2 := <-firstErr, <-secondErr
	if !errors.Is(e1, generated.ErrNoPublish) {
		t.Fatalf("the first Unlock: %v, want generated.ErrNoPublish", e1)
	}
	for _, k := range []string{a.Key(), b.Key()} {
		if got, _ := n.Do(t, "EXISTS", k).AsInt64(); got != 1 {
			t.Fatalf("%s: every release was refused, yet the lock is gone", k)
		}
	}
	if errors.Is(e2, ErrNotHeld) {
		t.Fatalf("an Unlock beside the refused one answered ErrNotHeld while every member holds its lock: %v", e2)
	}
	if !errors.Is(e2, generated.ErrNoPublish) {
		t.Fatalf("the Unlock beside the refused one: %v, want generated.ErrNoPublish", e2)
	}
	if err := n.Do(t, "ACL", "SETUSER", "app", "allchannels").Error(); err != nil {
		t.Fatal(err)
	}
	if err := ml.Unlock(lctx); err != nil {
		t.Fatalf("Unlock again once the user may publish: %v", err)
	}
	for _, k := range []string{a.Key(), b.Key()} {
		if got, _ := n.Do(t, "EXISTS", k).AsInt64(); got != 0 {
			t.Errorf("%s: still held after Unlock again", k)
		}
	}
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
	if err := n.Do(t, "ACL", "SETUSER", "app", "on", ">pw", "~*", "resetchannels", "+@all").Error(); err != nil {
		t.Fatalf("ACL SETUSER: %v", err)
	}
	app := newTestClient(t, n.Client(t, func(o *rueidis.ClientOption) { o.Username, o.Password = "app", "pw" }), sharedPrefix(t))
	a, b := mustMutex(t, app, "a"), mustMutex(t, app, "b")
	ml := mustMulti(t, []Locker{a, b})
	ctx := testCtx(t, 30*time.Second)
	owner := WithOwner(ctx, "worker-9")
	lctx, err := ml.Lock(owner)
	if err != nil {
		t.Fatal(err)
	}
	mh := lctx.Value(ml.key).(*multiHeld)
	secondErr := make(chan error, 1)
	var first atomic.Bool
	ml.unlockHook = func() {
		if !first.CompareAndSwap(false, true) {
			return
		}
		go func() { secondErr <- ml.Unlock(owner) }()
		// Until the Unlock by owner has marked the hold (it may wait for
		// this one first instead).
		for end := time.Now().Add(500 * time.Millisecond); mh.state.Load() == endNone && time.Now().Before(end); {
			time.Sleep(time.Millisecond)
		}
	}
	e1 := ml.Unlock(lctx)
	e2 := <-secondErr
	for _, k := range []string{a.Key(), b.Key()} {
		if got, _ := n.Do(t, "EXISTS", k).AsInt64(); got != 1 {
			t.Fatalf("%s: every release was refused, yet the lock is gone", k)
		}
	}
	if errors.Is(e1, ErrNotHeld) {
		t.Fatalf("the Unlock with the hold's context answered ErrNotHeld while every member holds its lock: %v", e1)
	}
	if !errors.Is(e1, generated.ErrNoPublish) {
		t.Fatalf("the Unlock with the hold's context: %v, want generated.ErrNoPublish", e1)
	}
	if !errors.Is(e2, generated.ErrNoPublish) {
		t.Fatalf("the Unlock by owner beside it: %v, want generated.ErrNoPublish", e2)
	}
	if err := n.Do(t, "ACL", "SETUSER", "app", "allchannels").Error(); err != nil {
		t.Fatal(err)
	}
	if err := ml.Unlock(lctx); err != nil {
		t.Fatalf("Unlock again once the user may publish: %v", err)
	}
	for _, k := range []string{a.Key(), b.Key()} {
		if got, _ := n.Do(t, "EXISTS", k).AsInt64(); got != 0 {
			t.Errorf("%s: still held after Unlock again", k)
		}
	}
}
