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

// TestRedLockUnlockBoundedByNodeTimeout: each node's release is bounded by
// the node timeout, not by the release timeout of the node's Client, so an
// Unlock with a frozen node returns about a node timeout later; a
// WithReleaseTimeout given to NewRedLock sets that bound instead.
func TestRedLockUnlockBoundedByNodeTimeout(t *testing.T) {
	t.Parallel()
	_, cs, pxs := proxiedNodes(t, 3, WithReleaseTimeout(10*time.Second))
	ctx := testCtx(t, 60*time.Second)
	for _, c := range []struct {
		name     string
		opts     []RedLockOption
		min, max time.Duration
	}{
		// A node timeout of a second, which a loaded machine's Lock meets,
		// and bounds far enough apart to tell which timeout ended the wait.
		{"node timeout", []RedLockOption{WithNodeTimeout(time.Second)}, 900 * time.Millisecond, 5 * time.Second},
		{"release timeout", []RedLockOption{WithNodeTimeout(time.Second), WithReleaseTimeout(3 * time.Second)}, 2900 * time.Millisecond, 7 * time.Second},
	} {
		r := mustRedLock(t, "bounded:"+c.name, cs, append([]RedLockOption{WithLease(10 * time.Second)}, c.opts...)...)
		lctx := lockEveryNode(t, ctx, r) // node 0's release is the one timed
		pxs[0].Freeze()
		start := time.Now()
		err := r.Unlock(lctx)
		took := time.Since(start)
		pxs[0].Thaw()
		if err == nil {
			t.Errorf("%s: Unlock with a frozen node: <nil>, want that node's error", c.name)
		}
		if took < c.min || took > c.max {
			t.Errorf("%s: Unlock with a frozen node took %s, want %s to %s", c.name, took, c.min, c.max)
		}
	}
}
