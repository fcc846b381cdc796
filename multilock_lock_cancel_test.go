package scriptlock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Lock(ctx) on a MultiLock returns within about a round trip of ctx's
// cancellation also when ctx, without a deadline, is cancelled while a
// failed attempt's give-back waits on a member whose server stopped
// answering: the give-back goes on in the background. The give-back was
// bounded only when ctx had ended, or had a deadline, before it began, so
// a cancellation during it kept the caller for every try's release timeout.
func TestMultiLockLockCancelledDuringGiveBack(t *testing.T) {
	t.Parallel()
	testMultiLockCancelledDuringGiveBack(t, "cg", func(ml *MultiLock, ctx context.Context) error {
		_, err := ml.Lock(ctx)
		return err
	})
}

// So does TryLock with a wait, which waited for the give-back until its
// wait's end (plus the overrun), seconds past the cancellation.
func TestMultiLockTryLockCancelledDuringGiveBack(t *testing.T) {
	t.Parallel()
	testMultiLockCancelledDuringGiveBack(t, "ct", func(ml *MultiLock, ctx context.Context) error {
		_, err := ml.TryLock(ctx, 10*time.Second)
		return err
	})
}

func testMultiLockCancelledDuringGiveBack(t *testing.T, name string, lock func(*MultiLock, context.Context) error) {
	nodes := redistest.Servers(t, 2)
	px := netproxy.New(t, nodes[0].Addr)
	c0 := newTestClient(t, px.Client(t), WithWatchdog(4*time.Second, time.Second))
	c1 := newTestClient(t, nodes[1].Client(t))
	ctx := testCtx(t, 30*time.Second)
	a, b := mustMutex(t, c0, name+"-a"), mustMutex(t, c1, name+"-b")
	warm(t, a)
	warm(t, b)
	hctx, err := mustMutex(t, c1, name+"-b").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Unlock(hctx) }()
	var once sync.Once
	frozen := afterLock{a, func() { once.Do(px.Freeze) }}
	defer px.Thaw()
	// b's member wait runs out after 200 ms; the give-back of a then hangs.
	ml := mustMulti(t, []Locker{frozen, b}, WithMemberWait(200*time.Millisecond))
	lctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const after = 600 * time.Millisecond
	time.AfterFunc(after, cancel)
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- lock(ml, lctx) }()
	var elapsed time.Duration
	select {
	case err = <-done:
		elapsed = time.Since(start)
	case <-time.After(20 * time.Second):
		px.Thaw()
		t.Fatal("not returned after 20s")
	}
	px.Thaw()
	if !errors.Is(err, context.Canceled) {
		t.Errorf("%v, want context.Canceled", err)
	}
	if elapsed > after+400*time.Millisecond {
		t.Errorf("cancelled after %s, returned after %s", after, elapsed)
	}
	if !eventually(10*time.Second, func() bool { return !lockedAll(t, ctx, a)[0] }) {
		t.Fatal("member a held after the failed Lock")
	}
}
