package scriptlock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Two goroutines share an owner on one RedLock. The first one's attempt is
// refused on nodes 1 and 2 (another owner holds them) and gives up; while it
// cleans up, the other holder lets go and the second goroutine takes the
// lock on every node. The failed attempt's cleanup must leave the second
// goroutine's hold alone on the nodes it was not granted: the second
// goroutine's context must not stay live with fewer than a quorum holding.
func TestRedLockSharedOwnerFailedAttemptKeepsOther(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	ctx := testCtx(t, 30*time.Second)
	r := mustRedLock(t, "job", cs, WithNodeTimeout(time.Second))
	others := []*Mutex{mustMutex(t, cs[1], "job"), mustMutex(t, cs[2], "job")}
	var octxs []context.Context
	for _, m := range others {
		o, err := m.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		octxs = append(octxs, o)
	}
	worker := WithOwner(ctx, "worker")
	var (
		once sync.Once
		bctx context.Context
		berr error
	)
	second := func() {
		for i, m := range others {
			if err := m.Unlock(octxs[i]); err != nil {
				t.Error(err)
			}
		}
		bctx, berr = r.TryLock(worker, 5*time.Second)
	}
	// The second goroutine's Lock runs, at the latest, as the failed
	// attempt is about to give a node back that it was not granted.
	r.releaseHook = func(node int) {
		if node != 0 {
			once.Do(second)
		}
	}
	_, err := r.TryLock(worker, 0)
	r.releaseHook = nil
	if !errors.Is(err, ErrQuorum) {
		t.Fatalf("first attempt with nodes 1 and 2 held by another owner: %v, want ErrQuorum", err)
	}
	once.Do(second)
	if berr != nil {
		t.Fatalf("second goroutine's TryLock: %v", berr)
	}
	held := 0
	for _, h := range heldOn(t, r, nodes, 0, 1, 2) {
		if h {
			held++
		}
	}
	if held < r.Quorum() {
		time.Sleep(100 * time.Millisecond) // let any loss be signalled
		if bctx.Err() == nil {
			t.Fatalf("the second goroutine's RedLock context is live with %d of 3 nodes holding the lock", held)
		}
		t.Fatalf("the second goroutine's hold was given up by the first one's failed attempt: %d of 3 nodes hold it (%v)", held, context.Cause(bctx))
	}
	if err := r.Unlock(bctx); err != nil {
		t.Fatal(err)
	}
}
