package scriptlock

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Extend given the context of a hold that has ended extends nothing, even
// when the owner (shared through WithOwner) holds the lock again: the new
// hold's lease is its own context's to keep.
func TestExtendOfEndedHoldLeavesOwnersNewHold(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	m := mustMutex(t, c, "extend-named")
	ctx := WithOwner(testCtx(t, 20*time.Second), "job-1")
	const lease = 20 * time.Second
	lctx1, err := m.LockWithLease(ctx, lease)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(lctx1); err != nil {
		t.Fatal(err)
	}
	lctx2, err := m.LockWithLease(ctx, lease)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Unlock(lctx2)
	if err := m.Extend(ctx, lctx1, time.Minute); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Extend with the context of a released hold: %v, want ErrNotHeld", err)
	}
	ttl, err := node.Do(t, "PTTL", m.Key()).AsInt64()
	if err != nil {
		t.Fatal(err)
	}
	if ttl > int64(lease/time.Millisecond) {
		t.Fatalf("the owner's new hold has a %d ms lease, more than the %s it was taken with", ttl, lease)
	}
}

// A RedLock whose hold on nodes 0 and 1 ended (released there) while its
// owner, shared through WithOwner, took those nodes again does not count
// the owner's new holds toward its quorum: with two of its own three nodes
// left unable to answer in time, Extend fails short of a quorum. Five nodes,
// so that the RedLock, still held on three, is not lost (a RedLock released
// on a majority of its nodes is, and Extend would then fail before it
// counted anything).
func TestRedLockExtendCountsOnlyItsOwnHolds(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 5)
	cs := redlockClients(t, nodes)
	ctx := WithOwner(testCtx(t, 30*time.Second), "job-2")
	const lease = 20 * time.Second
	r := mustRedLock(t, "extend-named", cs, WithLease(lease), WithNodeTimeout(time.Second))
	// The test needs the hold on every node: under load a node's grant can
	// come after the 300 ms node timeout, and the RedLock holds on fewer.
	var lctx context.Context
	var h *redHeld
	for attempt := 0; ; attempt++ {
		var err error
		if lctx, err = r.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		h = lctx.Value(r.id).(*redHeld)
		if !slices.Contains(h.ctxs, nil) {
			break
		}
		if attempt == 20 {
			t.Fatalf("no Lock of 21 held on all 5 nodes (node timeout 300ms)")
		}
		if err := r.Unlock(lctx); err != nil {
			t.Fatal(err)
		}
	}
	defer r.Unlock(lctx)
	for i := range 2 {
		if err := r.nodes[i].Unlock(h.ctxs[i]); err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
		nctx, err := r.nodes[i].LockWithLease(ctx, lease)
		if err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
		defer r.nodes[i].Unlock(nctx)
	}
	time.Sleep(100 * time.Millisecond)
	if lctx.Err() != nil {
		t.Fatalf("RedLock held on 3 nodes of 5 ended: %v", context.Cause(lctx))
	}
	// Nodes 2 and 3 hold back scripts past the node timeout.
	for _, i := range []int{2, 3} {
		if err := nodes[i].Do(t, "CLIENT", "PAUSE", "1500", "WRITE").Error(); err != nil {
			t.Fatal(err)
		}
	}
	err := r.Extend(ctx, lctx, time.Minute)
	if !errors.Is(err, ErrQuorum) || !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Extend of a RedLock of which only node 4 answered: %v, want ErrQuorum and ErrNotHeld", err)
	}
	for i := range 2 {
		ttl, err := nodes[i].Do(t, "PTTL", r.nodes[i].Key()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		if ttl > int64(lease/time.Millisecond) {
			t.Errorf("node %d: the owner's new hold has a %d ms lease, more than the %s it was taken with", i, ttl, lease)
		}
	}
}
