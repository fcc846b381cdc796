package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A RedLock whose context ended with the context it was locked with stays
// held (TestRedLockParentLostKeepsHold), and so must still notice the loss
// of its quorum: the nodes that still hold it are given back and Unlock
// answers ErrNotHeld, as for a RedLock whose context was live. The nodes'
// watchers ended with that context: the minority node was renewed by its
// watchdog until Unlock, which then reported the lock released.
func TestRedLockParentEndedQuorumLoss(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes, WithWatchdog(600*time.Millisecond, 100*time.Millisecond))
	ctx := testCtx(t, 20*time.Second)
	parent, end := context.WithCancel(ctx)
	r := mustRedLock(t, "job", cs, WithNodeTimeout(400*time.Millisecond))
	lctx := lockEveryNode(t, parent, r) // node 2's give-back is the one checked
	end()
	<-lctx.Done()
	for _, i := range []int{0, 1} {
		if _, err := mustMutex(t, cs[i], "job").ForceUnlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if !eventually(3*time.Second, func() bool { return !heldOn(t, r, nodes, 2)[2] }) {
		t.Errorf("node 2 still holds the lock 3s after 2 of 3 nodes lost it, with no Unlock")
	}
	if err := r.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
		t.Errorf("Unlock after the quorum was lost: %v, want ErrNotHeld", err)
	}
}
