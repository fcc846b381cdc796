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
	nodes, cs, obs := lastNodeObserved(t)                                             // the node given back
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
	callbackUnlockNotHeld(t, obs, 10*time.Second, "the give-back's callback", "an Observer's ReleaseStart during the give-back of the lost RedLock")
	givenBackWithin(t, h.givenBack, "RedLock")
	if err := r.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
		t.Errorf("Unlock after the loss: %v, want ErrNotHeld", err)
	}
	if h := heldOn(t, r, nodes, 0, 1, 2); h[0] || h[1] || h[2] {
		t.Errorf("nodes holding the lock after the give-back: %v", h)
	}
}

// lastNodeObserved starts three Redis servers and returns a Client of each,
// the last one's with obs as its Observer.
func lastNodeObserved(t *testing.T) ([]*redistest.Node, []*Client, *unlockInRelease) {
	t.Helper()
	nodes := redistest.Servers(t, 3)
	prefix := sharedPrefix(t)
	obs := &unlockInRelease{err: make(chan error, 1)}
	cs := make([]*Client, len(nodes))
	for i, n := range nodes {
		opts := []Option{prefix}
		if i == len(nodes)-1 {
			opts = append(opts, WithObserver(obs))
		}
		cs[i] = newTestClient(t, n.Client(t), opts...)
	}
	return nodes, cs, obs
}

// callbackUnlockNotHeld waits up to wait for the Unlock obs makes from a
// ReleaseStart inside a give-back and checks it answered ErrNotHeld; what
// names that callback, where the Unlock's place, in the failure messages.
func callbackUnlockNotHeld(t *testing.T, obs *unlockInRelease, wait time.Duration, what, where string) {
	t.Helper()
	select {
	case err := <-obs.err:
		if !errors.Is(err, ErrNotHeld) {
			t.Errorf("the Unlock from %s: %v, want ErrNotHeld", what, err)
		}
	case <-time.After(wait):
		t.Fatalf("Unlock from %s still running after %v", where, wait)
	}
}

// givenBackWithin waits up to 10 s for the give-back of a lost hold of the
// lock kind named to end (its givenBack closed).
func givenBackWithin(t *testing.T, givenBack <-chan struct{}, kind string) {
	t.Helper()
	select {
	case <-givenBack:
	case <-time.After(10 * time.Second):
		t.Fatalf("the give-back of the lost %s still running after 10s", kind)
	}
}
