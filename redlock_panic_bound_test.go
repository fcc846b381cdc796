package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A TryLock with a wait whose attempt panics as one node grants (an
// Observer's AcquireEnd) and again as another node's grant is given back
// (its ReleaseStart): the second panic reaches the caller, and the bound of
// the give-back is stopped all the same, as on every other path. It was
// not: its context and timer were kept until the wait's end.
func TestRedLockPanicGiveBackBoundStopped(t *testing.T) {
	// Not parallel: openGiveBackBounds counts every test's bounds.
	nodes := redistest.Servers(t, 3)
	prefix := sharedPrefix(t)
	cs := []*Client{
		newTestClient(t, nodes[0].Client(t), prefix, WithObserver(releaseBomb{name: "job"})),
		newTestClient(t, nodes[1].Client(t), prefix, WithObserver(acquireBomb{name: "job"})),
		newTestClient(t, nodes[2].Client(t), prefix),
	}
	ctx := testCtx(t, 20*time.Second)
	r := mustRedLock(t, "job", cs, WithNodeTimeout(time.Second))
	before := openGiveBackBounds.Load()
	if p := panicked(func() { _, _ = r.TryLock(ctx, time.Hour) }); p == nil {
		t.Fatal("TryLock did not panic")
	}
	if open := openGiveBackBounds.Load() - before; open != 0 {
		t.Errorf("after TryLock panicked: %d give-back bounds not stopped, want 0", open)
	}
	if h := heldOn(t, r, nodes, 0, 1, 2); h[0] || h[1] || h[2] {
		t.Fatalf("nodes holding the lock after TryLock panicked: %v", h)
	}
}
