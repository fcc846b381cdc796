package scriptlock

import (
	"errors"
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
// owner, shared through WithOwner, took those nodes again is extended on one
// node only: the owner's new holds are not the RedLock's, and must not count
// toward its quorum.
func TestRedLockExtendCountsOnlyItsOwnHolds(t *testing.T) {
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	ctx := WithOwner(testCtx(t, 30*time.Second), "job-2")
	const lease = 20 * time.Second
	r := mustRedLock(t, "extend-named", cs, WithLease(lease))
	lctx, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Unlock(lctx)
	h := lctx.Value(r.id).(*redHeld)
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
	// Two nodes of three released: the RedLock is lost (ErrNotHeld), or,
	// before its loss is seen, short of a quorum (ErrQuorum, ErrNotHeld).
	err = r.Extend(ctx, lctx, time.Minute)
	if !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Extend of a RedLock held on one node of 3: %v, want ErrNotHeld", err)
	}
}
