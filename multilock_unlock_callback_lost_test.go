package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestMultiLockUnlockFromGiveBackCallback: a MultiLock lost (a member
// released through its own handle) gives its other member back in the
// background, and an Observer's ReleaseStart, called for that release,
// unlocks the same hold, with its context or by owner. That Unlock cannot
// wait for the give-back it is called inside: it answers ErrNotHeld, as an
// Unlock of a lost hold does, and the give-back ends. It waited for the
// give-back, which waited for it: both hung for good.
func TestMultiLockUnlockFromGiveBackCallback(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	plain := newTestClient(t, node.Client(t), prefix)
	for _, how := range []string{"ByContext", "ByOwner"} {
		t.Run(how, func(t *testing.T) {
			obs := &unlockInRelease{err: make(chan error, 1)}
			observed := newTestClient(t, node.Client(t), prefix, WithObserver(obs)) // the member given back
			a, b := mustMutex(t, plain, "giveback-callback-a-"+how), mustMutex(t, observed, "giveback-callback-b-"+how)
			ml := mustMulti(t, []Locker{a, b})
			unlockFromGiveBack(t, ml, a, obs, how, "during the give-back of the lost MultiLock")
		})
	}
}

// unlockFromGiveBack loses a hold of ml, a MultiLock whose first member is a
// (unlocked through its own handle), while obs unlocks that hold from a
// ReleaseStart of the give-back, with its context or, how "ByOwner", by
// owner, the hold then the owner's most recent above a live one. That
// Unlock answers ErrNotHeld without waiting for the give-back, which ends;
// where names the callback's place in the failure message.
func unlockFromGiveBack(t *testing.T, ml *MultiLock, a Locker, obs *unlockInRelease, how, where string) {
	t.Helper()
	ctx := testCtx(t, 30*time.Second)
	octx := WithOwner(ctx, "job")
	outer, err := ml.Lock(octx)
	if err != nil {
		t.Fatal(err)
	}
	lctx := outer
	if how == "ByOwner" {
		// The lost hold is the owner's most recent, above a live one.
		if lctx, err = ml.Lock(octx); err != nil {
			t.Fatal(err)
		}
	}
	mh := lctx.Value(ml.key).(*multiHeld)
	inner := func() error { return ml.Unlock(lctx) }
	if how == "ByOwner" {
		inner = func() error { return ml.Unlock(WithOwner(ctx, "job")) }
	}
	obs.unlock.Store(&inner)
	if err := a.Unlock(mh.ctxs[0]); err != nil {
		t.Fatal(err)
	}
	callbackUnlockNotHeld(t, obs, 10*time.Second, "the give-back's callback", "an Observer's ReleaseStart "+where)
	givenBackWithin(t, mh.givenBack, "MultiLock")
	if how == "ByOwner" {
		if err := outer.Err(); err != nil {
			t.Fatalf("the owner's earlier hold ended: %v", err)
		}
		if err := ml.Unlock(outer); err != nil {
			t.Fatal(err)
		}
	} else if err := ml.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
		t.Errorf("Unlock after the loss: %v, want ErrNotHeld", err)
	}
}
