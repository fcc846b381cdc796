package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An Observer of one node's Client that panics as that node grants a
// RedLock: the panic reaches Lock's caller, as for a Mutex (it ran on a
// goroutine of the attempt, and crashed the process), and the other nodes'
// grants are given back.
func TestRedLockObserverPanicReachesCaller(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	prefix := sharedPrefix(t)
	cs := []*Client{
		newTestClient(t, nodes[0].Client(t), prefix),
		newTestClient(t, nodes[1].Client(t), prefix, WithObserver(acquireBomb{name: "job"})),
		newTestClient(t, nodes[2].Client(t), prefix),
	}
	ctx := testCtx(t, 20*time.Second)
	r := mustRedLock(t, "job", cs, WithNodeTimeout(time.Second))
	if p := panicked(func() { _, _ = r.Lock(ctx) }); p == nil {
		t.Fatal("Lock did not panic")
	}
	if h := heldOn(t, r, nodes, 0, 1, 2); h[0] || h[1] || h[2] {
		t.Fatalf("nodes holding the lock after the Observer's panic: %v", h)
	}
}

// releaseBomb is an Observer whose ReleaseStart panics for the lock called
// name.
type releaseBomb struct {
	NopObserver
	name string
}

func (b releaseBomb) ReleaseStart(ctx context.Context, op Op) context.Context {
	if op.Name == b.name {
		panic("observer: ReleaseStart " + op.Name)
	}
	return ctx
}

// An Observer of one node's Client that panics as that node's release
// starts: the panic reaches Unlock's caller once every node's release has
// run (it ran on a goroutine of the release, and crashed the process).
func TestRedLockUnlockObserverPanicReachesCaller(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	prefix := sharedPrefix(t)
	cs := []*Client{
		newTestClient(t, nodes[0].Client(t), prefix),
		newTestClient(t, nodes[1].Client(t), prefix, WithObserver(releaseBomb{name: "job"})),
		newTestClient(t, nodes[2].Client(t), prefix),
	}
	ctx := testCtx(t, 20*time.Second)
	r := mustRedLock(t, "job", cs, WithNodeTimeout(time.Second))
	lctx, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p := panicked(func() { _ = r.Unlock(lctx) }); p == nil {
		t.Fatal("Unlock did not panic")
	}
	if h := heldOn(t, r, nodes, 0, 1, 2); h[0] || h[1] || h[2] {
		t.Fatalf("nodes holding the lock after Unlock panicked: %v", h)
	}
}

// The same through a MultiLock's Unlock.
func TestMultiLockUnlockObserverPanicReachesCaller(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	plain := newTestClient(t, node.Client(t))
	bombed := newTestClient(t, node.Client(t), WithObserver(releaseBomb{name: "b"}))
	ctx := testCtx(t, 20*time.Second)
	a, b := mustMutex(t, plain, "a"), mustMutex(t, bombed, "b")
	ml := mustMulti(t, []Locker{a, b})
	lctx, err := ml.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p := panicked(func() { _ = ml.Unlock(lctx) }); p == nil {
		t.Fatal("Unlock did not panic")
	}
	if got := lockedAll(t, ctx, a, b); got[0] || got[1] {
		t.Fatalf("members held after Unlock panicked: %v", got)
	}
}

// A node's Extend that panics (here in the rueidis client) reaches
// RedLock.Extend's caller once every node's Extend has run, instead of
// crashing the process from the goroutine it ran on.
func TestRedLockExtendPanicReachesCaller(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	prefix := sharedPrefix(t)
	rc := newPanickyClient(nodes[1].Client(t), scriptsThrough("Do"))
	cs := []*Client{
		newTestClient(t, nodes[0].Client(t), prefix),
		newTestClient(t, rc, prefix),
		newTestClient(t, nodes[2].Client(t), prefix),
	}
	ctx := testCtx(t, 20*time.Second)
	r := mustRedLock(t, "job", cs, WithLease(10*time.Second), WithNodeTimeout(time.Second))
	lctx, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Unlock(lctx)
	rc.left.Store(1)
	if p := panicked(func() { _ = r.Extend(ctx, lctx, 20*time.Second) }); p == nil {
		t.Fatal("Extend did not panic")
	}
}
