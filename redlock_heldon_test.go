package scriptlock

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestRedLockHeldOn: HeldOn tells which nodes hold a RedLock's hold, as the
// process knows it: not a node that answered past the node timeout, not one
// whose hold was lost since, none once it is unlocked; nil for a context of
// no hold of this RedLock.
func TestRedLockHeldOn(t *testing.T) {
	t.Parallel()
	_, cs, pxs := proxiedNodes(t, 5)
	ctx := testCtx(t, 30*time.Second)
	r := mustRedLock(t, "held-on", cs, WithNodeTimeout(300*time.Millisecond))
	if got := r.HeldOn(ctx); got != nil {
		t.Fatalf("HeldOn of a context with no hold = %v, want nil", got)
	}
	// Node 4 answers past the node timeout: the others make the quorum.
	pxs[4].Delay(time.Second)
	var lctx context.Context
	for try := 1; ; try++ {
		l, err := r.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := r.HeldOn(l)
		if slices.Equal(got, []bool{true, true, true, true, false}) {
			lctx = l
			break
		}
		// Another node late as well, on a loaded machine.
		if got == nil || got[4] || try == 10 {
			t.Fatalf("HeldOn with node 4 late = %v, want nodes 0 to 3", got)
		}
		if err := r.Unlock(l); err != nil {
			t.Fatal(err)
		}
	}
	pxs[4].Delay(0)
	if got := mustRedLock(t, "held-on", cs).HeldOn(lctx); !slices.Equal(got, []bool{true, true, true, true, false}) {
		t.Fatalf("HeldOn through another handle = %v", got)
	}
	if got := mustRedLock(t, "other", cs).HeldOn(lctx); got != nil {
		t.Fatalf("HeldOn of another RedLock's hold = %v, want nil", got)
	}
	// Node 0's hold is taken away: the hold stands on three nodes.
	if _, err := mustMutex(t, cs[0], "held-on").ForceUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	if !eventually(5*time.Second, func() bool {
		return slices.Equal(r.HeldOn(lctx), []bool{false, true, true, true, false})
	}) {
		t.Fatalf("HeldOn after node 0's loss = %v, want nodes 1 to 3", r.HeldOn(lctx))
	}
	if err := lctx.Err(); err != nil {
		t.Fatalf("lock context ended with 3 of 5 nodes holding: %v", context.Cause(lctx))
	}
	if err := r.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	if got := r.HeldOn(lctx); !slices.Equal(got, make([]bool, 5)) {
		t.Fatalf("HeldOn after Unlock = %v, want none", got)
	}
}
