package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A member released through its own handle (its Unlock given the
// MultiLock's context, which names the owner) leaves the set not held: the
// MultiLock's context ends with ErrLockLost, and the other members are given
// back as for a lost member, not renewed by their watchdogs until an Unlock
// that a caller taking the lost context as the end may never call.
func TestMultiLockMemberReleasedGivesBack(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), WithWatchdog(600*time.Millisecond, 100*time.Millisecond))
	ctx := testCtx(t, 20*time.Second)
	x, y := mustMutex(t, c, "x"), mustMutex(t, c, "y")
	ml := mustMulti(t, []Locker{x, y})
	lctx, err := ml.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Unlock(lctx); err != nil {
		t.Fatalf("Unlock of member x through its own handle: %v", err)
	}
	select {
	case <-lctx.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("MultiLock context alive after member x was released")
	}
	if !errors.Is(context.Cause(lctx), ErrLockLost) {
		t.Errorf("cause = %v, want ErrLockLost", context.Cause(lctx))
	}
	if !eventually(3*time.Second, func() bool { return !lockedAll(t, ctx, y)[0] }) {
		t.Errorf("member y still held 3s after member x was released, with no Unlock")
	}
	if err := ml.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
		t.Errorf("Unlock after a member was released: %v, want ErrNotHeld", err)
	}
}

// The same for a RedLock member given back through its own handle.
func TestMultiLockRedLockMemberReleasedGivesBack(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes, WithWatchdog(600*time.Millisecond, 100*time.Millisecond))
	ctx := testCtx(t, 20*time.Second)
	r := mustRedLock(t, "job", cs, WithNodeTimeout(400*time.Millisecond))
	y := mustMutex(t, cs[0], "y")
	ml := mustMulti(t, []Locker{r, y})
	lctx, err := ml.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Unlock(lctx); err != nil {
		t.Fatalf("Unlock of the RedLock member through its own handle: %v", err)
	}
	if !eventually(3*time.Second, func() bool { return !lockedAll(t, ctx, y)[0] }) {
		t.Errorf("member y still held 3s after the RedLock member was released, with no Unlock")
	}
	if !errors.Is(context.Cause(lctx), ErrLockLost) {
		t.Errorf("cause = %v, want ErrLockLost", context.Cause(lctx))
	}
	if err := ml.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
		t.Errorf("Unlock after a member was released: %v, want ErrNotHeld", err)
	}
}
