package scriptlock

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// unlockInRelease is an Observer whose first ReleaseStart calls unlock and
// keeps its error.
type unlockInRelease struct {
	NopObserver
	first  atomic.Bool
	unlock atomic.Pointer[func() error]
	err    chan error
}

func (o *unlockInRelease) ReleaseStart(ctx context.Context, _ Op) context.Context {
	if f := o.unlock.Load(); f != nil && o.first.CompareAndSwap(false, true) {
		o.err <- (*f)()
	}
	return ctx
}

// TestRedLockUnlockFromReleaseCallback: an Observer's ReleaseStart, called
// while Unlock releases a RedLock's nodes, unlocks the same RedLock again.
// That Unlock cannot wait for the one it is called inside: it answers, and
// both return. It waited for the outer Unlock, which waited for it: both hung
// for good.
func TestRedLockUnlockFromReleaseCallback(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	prefix := sharedPrefix(t)
	obs := &unlockInRelease{err: make(chan error, 1)}
	cs := make([]*Client, len(nodes))
	for i, n := range nodes {
		cs[i] = newTestClient(t, n.Client(t), prefix, WithObserver(obs))
	}
	r := mustRedLock(t, "unlock-callback", cs)
	ctx := testCtx(t, 30*time.Second)
	// Every node granted: a late grant still held, or undone, would be
	// seen by the checks below.
	lctx := lockEveryNode(t, ctx, r)
	inner := func() error { return r.Unlock(lctx) }
	obs.unlock.Store(&inner)
	outer := make(chan error, 1)
	go func() { outer <- r.Unlock(lctx) }()
	select {
	case err := <-outer:
		if err != nil {
			t.Errorf("Unlock: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Unlock, with an Observer's ReleaseStart unlocking the RedLock again, still running after 10s")
	}
	if err := <-obs.err; !errors.Is(err, ErrNotHeld) {
		t.Errorf("the Unlock from the callback: %v, want ErrNotHeld", err)
	}
	if h := heldOn(t, r, nodes, 0, 1, 2); h[0] || h[1] || h[2] {
		t.Errorf("nodes holding the lock after Unlock: %v", h)
	}
}
