package scriptlock

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRedLockUnansweredNodeCheckedAtPauses: a node that never answers (its
// server stopped, its connection open) is a minority a RedLock is made to
// do without. The check that no two nodes reach one server asks it again
// after a pause (a second, doubling), not on every acquisition: each waited
// the node timeout for its INFO before the attempt, which waits it again for
// the node's grant, doubling every Lock's time for as long as the node stays
// silent. The asks are counted, not timed: on a loaded machine an
// acquisition's time says little of what it waited for.
func TestRedLockUnansweredNodeCheckedAtPauses(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	prefix := sharedPrefix(t)
	var infos atomic.Int64
	cs := []*Client{
		newTestClient(t, nodes[0].Client(t), prefix),
		newTestClient(t, nodes[1].Client(t), prefix),
		newTestClient(t, infoCounter(nodes[2].Client(t), &infos), prefix),
	}
	// Roomy for the live nodes on a loaded machine; each lock waits it
	// twice for the silent node (its grant, its release).
	const nodeTimeout = time.Second
	r, err := NewRedLock("unanswered", cs, WithNodeTimeout(nodeTimeout))
	if err != nil {
		t.Fatal(err)
	}
	nodes[2].Pause()
	defer nodes[2].Resume() // before the Clients close
	// One owner for every lock: a live node's release that still misses the
	// node timeout leaves a hold the next lock re-enters, not one that
	// refuses it.
	ctx := WithOwner(testCtx(t, 90*time.Second), "unanswered-owner")
	// Past a third pause (1 s + 2 s + 4 s): over fewer, a pause that does
	// not double asks as often as one that does.
	const locks = 10
	begun := time.Now()
	for i := range locks {
		lctx, err := r.TryLock(ctx, 0)
		if err != nil {
			t.Fatalf("TryLock %d: %v", i, err)
		}
		_ = r.Unlock(lctx) // the silent node's release is cut at its timeout
	}
	took := time.Since(begun)
	// The first acquisition asks; each pause that has run out since allows
	// one more.
	allowed := int64(1)
	for pause, sum := runAskMin, time.Duration(0); sum+pause <= took; pause *= 2 {
		sum += pause
		allowed++
	}
	if n := infos.Load(); n > allowed || n == 0 {
		t.Fatalf("%d acquisitions in %s with one node silent asked it its run_id %d times, want at least once and at most %d (once, then once per pause run out)",
			locks, took.Round(time.Millisecond), n, allowed)
	}
}
