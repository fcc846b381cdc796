package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRedLockUnlockAgainAfterNodeReleaseSentPanic: a RedLock whose node's
// client wrapper panicked after that node's release ran (the reply never
// reached the node's Client) kept the node for an Unlock again, whose
// release there gave up the owner's other hold on that node (the outer
// Lock's of the RedLock), which its holder still relied on, and answered
// nil. The Unlock again answers ErrNotHeld, and the other hold stays on
// every node.
func TestRedLockUnlockAgainAfterNodeReleaseSentPanic(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	rc := &sentThenPanicClient{Client: nodes[1].Client(t), wrapperFault: &wrapperFault{on: scriptsThrough("Do")}}
	cs := redlockClientsThrough(t, nodes, 1, rc)
	ctx := testCtx(t, 20*time.Second)
	r := mustRedLock(t, "sent-node", cs, WithNodeTimeout(time.Second))
	octx := WithOwner(ctx, "owner-1")
	outer, err := r.Lock(octx)
	if err != nil {
		t.Fatal(err)
	}
	inner, err := r.Lock(outer) // the owner's other hold, on every node
	if err != nil {
		t.Fatal(err)
	}
	holds := func(what string) {
		t.Helper()
		for i, m := range r.nodes {
			if st, err := m.State(octx); err != nil || st.HoldCount != 1 {
				t.Fatalf("node %d %s: %+v, %v; want 1 hold of the owner", i, what, st, err)
			}
		}
	}
	rc.left.Store(1) // node 1's release
	if p := panicked(func() { err = r.Unlock(inner) }); p == nil {
		t.Fatalf("Unlock did not pass the wrapper's panic on (%v)", err)
	}
	holds("after the Unlock")
	if err := r.Unlock(inner); !errors.Is(err, ErrNotHeld) {
		t.Errorf("Unlock again: %v; want ErrNotHeld, every node's release made", err)
	}
	holds("after Unlock again")
	if err := context.Cause(outer); err != nil {
		t.Fatalf("the other hold ended: %v", err)
	}
	if err := r.Unlock(outer); err != nil {
		t.Fatalf("the other hold's Unlock: %v", err)
	}
	if h := heldOn(t, r, nodes, 0, 1, 2); h[0] || h[1] || h[2] {
		t.Fatalf("nodes held after the other hold's Unlock: %v", h)
	}
}
