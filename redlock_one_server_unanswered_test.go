package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRedLockUnansweredNodeCheckedAtPauses: a node that never answers (its
// server stopped, its connection open) is a minority a RedLock is made to
// do without. The check that no two nodes reach one server asks it again
// after a pause, not on every acquisition: each waited the node timeout for
// its INFO before the attempt, which waits it again for the node's grant,
// doubling every Lock's time for as long as the node stays silent.
func TestRedLockUnansweredNodeCheckedAtPauses(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	const nodeTimeout = 200 * time.Millisecond
	r, err := NewRedLock("unanswered", cs, WithNodeTimeout(nodeTimeout))
	if err != nil {
		t.Fatal(err)
	}
	nodes[2].Pause()
	defer nodes[2].Resume() // before the Clients close
	ctx := testCtx(t, 30*time.Second)
	var slow []time.Duration
	for i := range 5 {
		begun := time.Now()
		lctx, err := r.TryLock(ctx, 0)
		took := time.Since(begun)
		if err != nil {
			t.Fatalf("TryLock %d: %v", i, err)
		}
		_ = r.Unlock(lctx) // the silent node's release is cut at its timeout
		t.Logf("TryLock %d took %v", i, took.Round(time.Millisecond))
		// The first asks the silent node its run_id: one more node
		// timeout before the check ran alongside the first attempt.
		if i > 0 && took > nodeTimeout*3/2 {
			slow = append(slow, took.Round(time.Millisecond))
		}
	}
	// One may ask the node again, its pause (a second) past.
	if len(slow) > 1 {
		t.Fatalf("acquisitions after the first with one node silent took %v, want about the node timeout %v each", slow, nodeTimeout)
	}
}
