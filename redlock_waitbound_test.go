package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TryLock(ctx, wait) on a RedLock returns within the documented overrun
// after its wait (waitOverrun, plus the failover guard's timeout) even with
// a node timeout far longer, when nodes stop answering mid-attempt and the
// release of a partial grant hangs too: what is left is undone in the
// background, and nothing stays held once the nodes answer again.
func TestRedLockTryLockWaitBound(t *testing.T) {
	t.Parallel()
	nodes, cs, pxs := proxiedNodes(t, 3)
	ctx := testCtx(t, 30*time.Second)
	r := mustRedLock(t, "job", cs, WithNodeTimeout(2*time.Second))
	l, err := r.Lock(ctx) // warm every connection
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Unlock(l); err != nil {
		t.Fatal(err)
	}
	pxs[1].Freeze()
	pxs[2].Freeze()
	// Node 0 grants; its release then finds it frozen too.
	frozen := make(chan struct{})
	r.releaseHook = func(node int) {
		if node == 0 {
			pxs[0].Freeze()
			close(frozen)
		}
	}
	const wait = 300 * time.Millisecond
	start := time.Now()
	_, err = r.TryLock(context.Background(), wait)
	elapsed := time.Since(start)
	r.releaseHook = nil
	select { // thawed after the release froze node 0, not before
	case <-frozen:
	case <-time.After(5 * time.Second):
		t.Error("node 0's release never began")
	}
	for _, px := range pxs {
		px.Thaw()
	}
	if !errors.Is(err, ErrQuorum) {
		t.Errorf("TryLock with two nodes frozen: %v, want ErrQuorum", err)
	}
	bound := wait + waitOverrun + DefaultGuardTimeout
	t.Logf("TryLock(ctx, %s) returned after %s", wait, elapsed)
	if elapsed > bound+400*time.Millisecond {
		t.Errorf("TryLock(ctx, %s) returned after %s; bound %s (+400ms margin)", wait, elapsed, bound)
	}
	if !eventually(8*time.Second, func() bool {
		h := heldOn(t, r, nodes, 0, 1, 2)
		return !h[0] && !h[1] && !h[2]
	}) {
		t.Fatalf("lock left on nodes after the failed TryLock: %v", heldOn(t, r, nodes, 0, 1, 2))
	}
}
