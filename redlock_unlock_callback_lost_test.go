package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRedLockUnlockFromGiveBackCallback: a RedLock lost (two nodes of three
// released through their own handles) gives the node still holding it back
// in the background, and an Observer's ReleaseStart, called for that
// release, unlocks the same hold. That Unlock cannot wait for the give-back
// it is called inside: it answers ErrNotHeld, as an Unlock of a lost hold
// does, and the give-back ends. It waited for the give-back, which waited
// for it: both hung for good.
func TestRedLockUnlockFromGiveBackCallback(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	prefix := sharedPrefix(t)
	obs := &unlockInRelease{err: make(chan error, 1)}
	cs := make([]*Client, len(nodes))
	for i, n := range nodes {
		var opts []Option
		if i == 2 {
			opts = append(opts, WithObserver(obs)) // the node given back
		}
		cs[i] = newTestClient(t, n.Client(t), append(opts, prefix)...)
	}
	r := mustRedLock(t, "unlock-giveback-callback", cs, WithNodeTimeout(time.Second)) // every node must hold it: roomy for a loaded machine
	ctx := testCtx(t, 30*time.Second)
	lctx, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h := lctx.Value(r.id).(*redHeld)
	for i, c := range h.ctxs {
		if c == nil {
			t.Fatalf("node %d did not grant the lock", i)
		}
	}
	inner := func() error { return r.Unlock(lctx) }
	obs.unlock.Store(&inner)
	for i := range 2 {
		if err := r.nodes[i].Unlock(h.ctxs[i]); err != nil {
			t.Fatalf("node %d released through its own handle: %v", i, err)
		}
	}
	select {
	case <-lctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the RedLock was not lost within 10s of two nodes of three released")
	}
	select {
	case err := <-obs.err:
		if !errors.Is(err, ErrNotHeld) {
			t.Errorf("the Unlock from the give-back's callback: %v, want ErrNotHeld", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Unlock from an Observer's ReleaseStart during the give-back of the lost RedLock still running after 10s")
	}
	select {
	case <-h.givenBack:
	case <-time.After(10 * time.Second):
		t.Fatal("the give-back of the lost RedLock still running after 10s")
	}
	if err := r.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
		t.Errorf("Unlock after the loss: %v, want ErrNotHeld", err)
	}
	if h := heldOn(t, r, nodes, 0, 1, 2); h[0] || h[1] || h[2] {
		t.Errorf("nodes holding the lock after the give-back: %v", h)
	}
}
