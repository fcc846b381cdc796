package scriptlock

import (
	"errors"
	"testing"
	"time"
)

// TestRedLockUnlockUnreachableNotNotHeld: an Unlock that reaches no node
// fails with the nodes' errors, not ErrNotHeld: the lock was held, and may
// still be until its lease ends; ErrNotHeld would tell the caller it was
// not.
func TestRedLockUnlockUnreachableNotNotHeld(t *testing.T) {
	t.Parallel()
	_, cs, pxs := proxiedNodes(t, 3, WithReleaseTimeout(300*time.Millisecond))
	ctx := testCtx(t, 20*time.Second)
	r := mustRedLock(t, "unreachable", cs, WithLease(10*time.Second), WithNodeTimeout(300*time.Millisecond))
	lctx, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, px := range pxs {
		px.Freeze()
	}
	err = r.Unlock(lctx)
	for _, px := range pxs {
		px.Thaw()
	}
	if err == nil {
		t.Fatal("Unlock with every node unreachable: <nil>, want the nodes' errors")
	}
	if errors.Is(err, ErrNotHeld) {
		t.Fatalf("Unlock with every node unreachable: %v; it errors.Is ErrNotHeld, which says the lock was not held", err)
	}
}
