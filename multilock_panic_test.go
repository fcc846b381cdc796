package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// acquireBomb is an Observer whose AcquireEnd panics when it reports a grant
// of the lock called name.
type acquireBomb struct {
	NopObserver
	name string
}

func (b acquireBomb) AcquireEnd(_ context.Context, op Op, e AcquireEvent) {
	if op.Name == b.name && e.Err == nil {
		panic("observer: AcquireEnd " + op.Name)
	}
}

// An Observer that panics as a MultiLock's second member is granted: the
// panic reaches the caller (the member's own grant is given back by the
// engine), and the member taken before it is given back too: no caller is
// left to release it.
func TestMultiLockObserverPanicGivesBack(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	plain := newTestClient(t, node.Client(t))
	bombed := newTestClient(t, node.Client(t), WithObserver(acquireBomb{name: "b"}))
	ctx := testCtx(t, 20*time.Second)
	a, b := mustMutex(t, plain, "a"), mustMutex(t, bombed, "b")
	ml := mustMulti(t, []Locker{a, b})
	if r := panicked(func() { _, _ = ml.Lock(ctx) }); r == nil {
		t.Fatal("Lock did not panic")
	}
	if !eventually(3*time.Second, func() bool {
		got := lockedAll(t, ctx, a, b)
		return !got[0] && !got[1]
	}) {
		t.Fatalf("members held after the Observer's panic: %v", lockedAll(t, ctx, a, b))
	}
}

// A member's Unlock that panics (here an Observer's ReleaseStart) as a lost
// MultiLock gives its other members back in the background: the panic is
// recovered there (no caller to reach, and it would crash the process), the
// member is still given back, and Unlock reports the loss.
func TestMultiLockGiveBackPanicRecovered(t *testing.T) {
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
	if _, err := a.ForceUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	<-lctx.Done()
	if err := ml.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Unlock of a lost MultiLock: %v, want ErrNotHeld", err)
	}
	if got := lockedAll(t, ctx, a, b); got[0] || got[1] {
		t.Fatalf("members held after the give-back panicked: %v", got)
	}
}

// A member's Extend that panics (here in the rueidis client) reaches
// MultiLock.Extend's caller once every member's Extend has run, instead of
// crashing the process from the goroutine it ran on.
func TestMultiLockExtendPanicReachesCaller(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := newPanickyClient(node.Client(t), scriptsThrough("Do"))
	plain := newTestClient(t, node.Client(t))
	wrapped := newTestClient(t, rc)
	ctx := testCtx(t, 20*time.Second)
	a, b := mustMutex(t, plain, "a", WithLease(10*time.Second)), mustMutex(t, wrapped, "b", WithLease(10*time.Second))
	ml := mustMulti(t, []Locker{a, b})
	lctx, err := ml.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer ml.Unlock(lctx)
	rc.left.Store(1)
	if p := panicked(func() { _ = ml.Extend(ctx, lctx, 20*time.Second) }); p == nil {
		t.Fatal("Extend did not panic")
	}
}

// A member's Unlock that panics (an Observer's ReleaseStart) as a TryLock
// with a wait gives back the members of a failed attempt, which it does in
// the background of a Client: the panic reaches TryLock's caller, as it
// does Unlock's, instead of crashing the process, and every member the
// attempt took is still given back.
func TestMultiLockRollbackPanicReachesCaller(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	plain := newTestClient(t, node.Client(t))
	bombed := newTestClient(t, node.Client(t), WithObserver(releaseBomb{name: "b"}))
	ctx := testCtx(t, 20*time.Second)
	a, b, c := mustMutex(t, plain, "a"), mustMutex(t, bombed, "b"), mustMutex(t, plain, "c")
	hctx, err := c.Lock(ctx) // another owner holds c: every attempt fails there
	if err != nil {
		t.Fatal(err)
	}
	defer c.Unlock(hctx)
	// The first attempt fails at c after its member wait, and its give-back
	// reaches b long before the wait ends. With c waited for until the end
	// of a 300ms wait, the give-back had only the wait's 100ms overrun: a
	// loaded machine took longer, and a give-back still running then goes
	// on in the background (its panic logged, as documented), so TryLock
	// returned without it.
	ml := mustMulti(t, []Locker{a, b, c}, WithMemberWait(300*time.Millisecond))
	if p := panicked(func() { _, _ = ml.TryLock(ctx, 3*time.Second) }); p == nil {
		t.Fatal("TryLock did not panic")
	}
	if got := lockedAll(t, ctx, a, b); got[0] || got[1] {
		t.Fatalf("members held after the give-back panicked: %v", got)
	}
}
