package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A node's lock released through that node's own Mutex handle (its Unlock
// given the RedLock's context, which names the owner) no longer holds the
// RedLock there: once fewer than a majority of nodes hold it, its context
// ends with ErrLockLost and the nodes still holding it are given back. It
// stayed live with one node of three, renewed by its watchdog.
func TestRedLockNodesReleasedLosesQuorum(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes, WithWatchdog(600*time.Millisecond, 100*time.Millisecond))
	ctx := testCtx(t, 20*time.Second)
	r := mustRedLock(t, "job", cs, WithNodeTimeout(400*time.Millisecond))
	lctx := lockEveryNode(t, ctx, r) // nodes 0 and 1 are released one by one, node 2 given back
	if err := mustMutex(t, cs[0], "job").Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if lctx.Err() != nil {
		t.Fatalf("lock context ended with 2 of 3 nodes holding: %v", context.Cause(lctx))
	}
	if err := mustMutex(t, cs[1], "job").Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lctx.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("lock context alive 3s after 2 of 3 nodes released the lock")
	}
	if !errors.Is(context.Cause(lctx), ErrLockLost) {
		t.Errorf("cause = %v, want ErrLockLost", context.Cause(lctx))
	}
	if !eventually(3*time.Second, func() bool { return !heldOn(t, r, nodes, 2)[2] }) {
		t.Errorf("node 2 still holds the lock 3s after the RedLock lost its quorum")
	}
	if err := r.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
		t.Errorf("Unlock after the quorum was lost: %v, want ErrNotHeld", err)
	}
}
