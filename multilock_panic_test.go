package scriptlock

import (
	"context"
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
