package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRedLockFirstLockFrozenNodeOneTimeout: the first acquisition of a new
// RedLock, whose check that no two nodes reach one server asks every node
// for its run_id, waits for a frozen node (its server stopped, its
// connection open) once: its node timeout, not that timeout for the check
// and again for the attempt.
func TestRedLockFirstLockFrozenNodeOneTimeout(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	// Roomy enough for the live nodes' first answers (a connection made,
	// the scripts loaded) on a loaded machine; waiting twice for the frozen
	// node would still take twice as long.
	const nodeTimeout = time.Second
	r, err := NewRedLock("first-frozen", cs, WithNodeTimeout(nodeTimeout))
	if err != nil {
		t.Fatal(err)
	}
	nodes[2].Pause()
	defer nodes[2].Resume() // before the Clients close
	ctx := testCtx(t, 30*time.Second)
	begun := time.Now()
	lctx, err := r.TryLock(ctx, 0)
	took := time.Since(begun)
	if err != nil {
		t.Fatalf("TryLock: %v", err)
	}
	_ = r.Unlock(lctx) // the frozen node's release is cut at its timeout
	t.Logf("first TryLock took %v", took.Round(time.Millisecond))
	if took > nodeTimeout*3/2 {
		t.Fatalf("the first TryLock with one node frozen took %v, want about the node timeout %v", took.Round(time.Millisecond), nodeTimeout)
	}
	// A second RedLock over the same Clients: the frozen node is asked
	// again only after a pause, and its attempt waits for it once.
	r2, err := NewRedLock("first-frozen-2", cs, WithNodeTimeout(nodeTimeout))
	if err != nil {
		t.Fatal(err)
	}
	begun = time.Now()
	lctx, err = r2.TryLock(ctx, 0)
	took = time.Since(begun)
	if err != nil {
		t.Fatalf("TryLock of another RedLock: %v", err)
	}
	_ = r2.Unlock(lctx)
	if took > nodeTimeout*3/2 {
		t.Fatalf("another RedLock's first TryLock with one node frozen took %v, want about the node timeout %v", took.Round(time.Millisecond), nodeTimeout)
	}
}
