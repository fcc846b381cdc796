package scriptlock

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRedLockUnlockBesideRefusedUnlock: an Unlock made while another
// Unlock of the same hold is still releasing, which the nodes then refuse
// (NO_PUBLISH: an ACL user without the lock's channels), waits for it and
// asks the nodes it could not release again. It answered ErrNotHeld
// ("already unlocked") at once, while every node went on holding the lock.
func TestRedLockUnlockBesideRefusedUnlock(t *testing.T) {
	t.Parallel()
	testRedLockUnlockBesideRefused(t, false)
}

// TestRedLockOwnerUnlockBesideRefusedUnlock: the same with an Unlock given a
// context that only names the owner (WithOwner). It answered ErrNotHeld at
// once (the hold no longer listed, its nodes still held here), while every
// node went on holding the lock.
func TestRedLockOwnerUnlockBesideRefusedUnlock(t *testing.T) {
	t.Parallel()
	testRedLockUnlockBesideRefused(t, true)
}

func testRedLockUnlockBesideRefused(t *testing.T, byOwner bool) {
	nodes := redistest.Servers(t, 3)
	r := mustRedLock(t, "unlock-beside", noChannelClients(t, nodes), WithNodeTimeout(time.Second)) // every node must hold it: roomy for a loaded machine
	ctx := testCtx(t, 30*time.Second)
	owner, what := ctx, "an Unlock beside the refused one"
	if byOwner {
		owner, what = WithOwner(ctx, "worker-7"), "an Unlock by owner beside the refused one"
	}
	lctx, err := r.Lock(owner)
	if err != nil {
		t.Fatal(err)
	}
	second := lctx
	if byOwner {
		second = owner
	}
	started, proceed := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	r.releaseHook = func(node int) {
		if node == 0 && first.CompareAndSwap(false, true) {
			close(started)
			<-proceed
		}
	}
	e1, e2 := unlockBesideBlocked(started, proceed, func() error { return r.Unlock(lctx) }, func() error { return r.Unlock(second) })
	redLockHeldEverywhere(t, r, nodes, "every release was refused, yet the lock")
	refusedUnlocks(t, e1, e2, "the first Unlock", what)
	allowChannels(t, nodes...)
	if err := r.Unlock(second); err != nil {
		t.Fatalf("Unlock again once the user may publish: %v", err)
	}
	if h := heldOn(t, r, nodes, 0, 1, 2); h[0] || h[1] || h[2] {
		t.Fatalf("nodes holding the lock after Unlock again: %v", h)
	}
	if err := r.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Unlock with the hold's context once released: %v, want ErrNotHeld", err)
	}
}

// TestRedLockOwnerUnlockBesideStartingUnlock: an Unlock with the hold's
// context has taken the hold's unlocking, and an Unlock that only names the
// owner is made before it marks the hold unlocked; the nodes then refuse
// the release (NO_PUBLISH). The Unlock with the context releases the nodes
// and reports the refusal, and the one by owner waits for it and asks them
// again. The one by owner marked the hold unlocked first and waited for the
// other, which, finding it unlocked and nothing yet to ask again, answered
// ErrNotHeld, "already unlocked", while every node held the lock.
func TestRedLockOwnerUnlockBesideStartingUnlock(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	r := mustRedLock(t, "owner-unlock-beside-starting", noChannelClients(t, nodes), WithNodeTimeout(time.Second)) // every node must hold it: roomy for a loaded machine
	owner := WithOwner(testCtx(t, 30*time.Second), "worker-8")
	lctx, err := r.Lock(owner)
	if err != nil {
		t.Fatal(err)
	}
	h := lctx.Value(r.id).(*redHeld)
	e1, e2 := unlockBesideStarting(func(f func()) { r.unlockHook = f }, func() bool { return h.state.Load() != endNone },
		func() error { return r.Unlock(lctx) }, func() error { return r.Unlock(owner) })
	redLockHeldEverywhere(t, r, nodes, "every release was refused, yet the lock")
	refusedUnlocks(t, e1, e2, "the Unlock with the hold's context", "the Unlock by owner beside it")
	allowChannels(t, nodes...)
	if err := r.Unlock(lctx); err != nil {
		t.Fatalf("Unlock again once the user may publish: %v", err)
	}
	if h := heldOn(t, r, nodes, 0, 1, 2); h[0] || h[1] || h[2] {
		t.Fatalf("nodes holding the lock after Unlock again: %v", h)
	}
}
