package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Once a RedLock's context ends with ErrLockLost, the nodes that still hold
// it are given back without an Unlock: their watchdogs must not keep a
// minority of nodes locked for as long as the process runs. A later Unlock
// answers ErrNotHeld, as for a lost Mutex.
func TestRedLockQuorumLossGivesBack(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes, WithWatchdog(600*time.Millisecond, 100*time.Millisecond))
	ctx := testCtx(t, 20*time.Second)
	r := mustRedLock(t, "job", cs, WithNodeTimeout(400*time.Millisecond))
	lctx := lockEveryNode(t, ctx, r) // node 2's give-back is the one checked
	for _, i := range []int{0, 1} {
		if _, err := mustMutex(t, cs[i], "job").ForceUnlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-lctx.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("lock context alive with 1 of 3 nodes holding")
	}
	if !eventually(3*time.Second, func() bool { return !heldOn(t, r, nodes, 2)[2] }) {
		t.Fatalf("node 2 still holds the lock 3s after the RedLock was lost (%v), with no Unlock", context.Cause(lctx))
	}
	if err := r.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Unlock after the loss: %v, want ErrNotHeld", err)
	}
}

// A RedLock locked with a context that then ends with ErrLockLost (the
// context of another lock, lost) is not lost itself: like a Mutex, it stays
// held on its nodes until Unlock.
func TestRedLockParentLostKeepsHold(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	ctx := testCtx(t, 20*time.Second)
	other := mustMutex(t, cs[0], "other")
	octx, err := other.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := mustRedLock(t, "job", cs, WithNodeTimeout(time.Second))
	lctx, err := r.Lock(octx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.ForceUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	<-lctx.Done()
	time.Sleep(200 * time.Millisecond)
	if h := heldOn(t, r, nodes, 0, 1, 2); !h[0] || !h[1] || !h[2] {
		t.Fatalf("RedLock given back when the context it was locked with ended (%v): held = %v", context.Cause(lctx), h)
	}
	if err := r.Unlock(lctx); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
}
