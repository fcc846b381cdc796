package scriptlock

import (
	"slices"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRedLockCheckPanicReachesCaller: a node's client wrapper that panics
// on the INFO asking its server's run_id (the check that no two nodes reach
// one server, run alongside the first attempt) panics on Lock's caller, as
// a panic in a node's attempt does, and the nodes' grants are given back. It
// ran on a goroutine of the check, and crashed the process.
func TestRedLockCheckPanicReachesCaller(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	prefix := sharedPrefix(t)
	// The node's wrapper panics on INFO server.
	rc := newPanickyNodes(nodes[1].Client(t), func(c wrapperCall) bool {
		return c.method == "Do" && slices.Equal(c.args, []string{"INFO", "server"})
	})
	rc.left.Store(-1)
	cs := []*Client{
		newTestClient(t, nodes[0].Client(t), prefix),
		newTestClient(t, rc, prefix),
		newTestClient(t, nodes[2].Client(t), prefix),
	}
	r := mustRedLock(t, "check-panic", cs, WithNodeTimeout(time.Second))
	ctx := testCtx(t, 20*time.Second)
	if p := panicked(func() { _, _ = r.TryLock(ctx, 0) }); p == nil {
		t.Fatal("TryLock did not panic")
	}
	if h := heldOn(t, r, nodes, 0, 1, 2); h[0] || h[1] || h[2] {
		t.Fatalf("nodes holding the lock after the check's panic: %v", h)
	}
	rc.left.Store(0)
	lctx, err := r.TryLock(ctx, 0)
	if err != nil {
		t.Fatalf("TryLock after the panic: %v", err)
	}
	if err := r.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
}
