package scriptlock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// Lock(ctx) on a RedLock returns within ctx's deadline plus about a round
// trip, as a Mutex's does, when a failed attempt's release hangs on a node
// that stopped answering: the release goes on in the background (nothing
// stays held once the node answers again). It ran on the caller's
// goroutine for the whole release timeout given to NewRedLock, past the
// deadline.
func TestRedLockLockDeadlineFrozenRelease(t *testing.T) {
	t.Parallel()
	nodes, cs, pxs := proxiedNodes(t, 3)
	ctx := testCtx(t, 30*time.Second)
	r := mustRedLock(t, "job", cs, WithReleaseTimeout(5*time.Second), WithNodeTimeout(300*time.Millisecond))
	l, err := r.Lock(ctx) // warm every connection
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Unlock(l); err != nil {
		t.Fatal(err)
	}
	// Nodes 1 and 2 are held by another owner: node 0 alone grants, and
	// its release then finds it frozen.
	for _, i := range []int{1, 2} {
		hctx, err := mustMutex(t, cs[i], "job").Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = mustMutex(t, cs[i], "job").Unlock(hctx) }()
	}
	var once sync.Once
	r.releaseHook = func(node int) {
		if node == 0 {
			once.Do(pxs[0].Freeze)
		}
	}
	defer func() { r.releaseHook = nil }()
	const deadline = 500 * time.Millisecond
	lctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	_, err = r.Lock(lctx)
	elapsed := time.Since(start)
	r.releaseHook = nil
	pxs[0].Thaw()
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrQuorum) {
		t.Errorf("Lock with two nodes held elsewhere: %v, want ErrQuorum and context.DeadlineExceeded", err)
	}
	t.Logf("Lock with a %s deadline returned after %s", deadline, elapsed)
	if elapsed > deadline+400*time.Millisecond {
		t.Errorf("Lock with a %s deadline returned after %s", deadline, elapsed)
	}
	if !eventually(8*time.Second, func() bool { return !heldOn(t, r, nodes, 0)[0] }) {
		t.Fatal("lock left on node 0 after the failed Lock")
	}
}
