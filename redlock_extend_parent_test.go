package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A RedLock whose lock context ended with the context it was locked with is
// still held on its nodes (TestRedLockParentLostKeepsHold), and Extend
// extends it, as Mutex.Extend does a Mutex in the same case: it answered
// ErrNotHeld while every node held the lock, whose lease then ran out.
func TestRedLockExtendAfterParentEnded(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	ctx := testCtx(t, 20*time.Second)
	const lease, extended = 2 * time.Second, 8 * time.Second
	r := mustRedLock(t, "job", cs, WithLease(lease), WithNodeTimeout(500*time.Millisecond))
	m := mustMutex(t, cs[0], "single", WithLease(lease))
	parent, cancel := context.WithCancel(ctx)
	lctx := lockEveryNode(t, parent, r) // every node's PTTL is checked
	mctx, err := m.Lock(parent)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := m.Extend(ctx, mctx, extended); err != nil {
		t.Fatalf("Mutex.Extend after its parent context ended: %v", err)
	}
	if err := r.Extend(ctx, lctx, extended); err != nil {
		t.Fatalf("RedLock.Extend after its parent context ended, held on every node %v: %v", heldOn(t, r, nodes, 0, 1, 2), err)
	}
	for i, n := range nodes {
		if pttl, err := n.Do(t, "PTTL", r.nodes[i].Key()).AsInt64(); err != nil || pttl <= lease.Milliseconds() {
			t.Fatalf("node %d after Extend(%s): PTTL %d ms, %v", i, extended, pttl, err)
		}
	}
	if err := r.Unlock(lctx); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	if h := heldOn(t, r, nodes, 0, 1, 2); h[0] || h[1] || h[2] {
		t.Fatalf("held after Unlock: %v", h)
	}
}
