package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Lock(ctx) on a MultiLock returns within ctx's deadline plus about a round
// trip, as a Mutex's does, when ctx ends while a member taken earlier has a
// server that stopped answering: that member is given back in the
// background (nothing stays held once it answers again). The give-back ran
// on the caller's goroutine, each of its three tries waiting out the
// member's release timeout, seconds past the deadline.
func TestMultiLockLockDeadlineFrozenGiveBack(t *testing.T) {
	t.Parallel()
	t.Run("proxy", func(t *testing.T) { testMultiLockLockDeadlineFrozen(t, false) })
	t.Run("SIGSTOP", func(t *testing.T) { testMultiLockLockDeadlineFrozen(t, true) })
}

func testMultiLockLockDeadlineFrozen(t *testing.T, sigstop bool) {
	t.Parallel()
	nodes := redistest.Servers(t, 2)
	px := netproxy.New(t, nodes[0].Addr)
	c0 := newTestClient(t, px.Client(t), WithWatchdog(4*time.Second, time.Second))
	c1 := newTestClient(t, nodes[1].Client(t))
	ctx := testCtx(t, 30*time.Second)
	a, b := mustMutex(t, c0, "dl-a"), mustMutex(t, c1, "dl-b")
	warm(t, a)
	warm(t, b)
	// b is held by another owner for the whole test.
	hctx, err := mustMutex(t, c1, "dl-b").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Unlock(hctx) }()
	// a is granted, then its server stops answering while b is waited for.
	freeze, thaw := px.Freeze, px.Thaw
	if sigstop {
		freeze, thaw = nodes[0].Pause, nodes[0].Resume
	}
	frozen := afterLock{a, freeze}
	defer thaw()
	ml := mustMulti(t, []Locker{frozen, b}, WithMemberWait(5*time.Second))
	const deadline = 500 * time.Millisecond
	lctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		_, err := ml.Lock(lctx)
		done <- err
	}()
	var elapsed time.Duration
	select {
	case err = <-done:
		elapsed = time.Since(start)
	case <-time.After(20 * time.Second):
		thaw()
		t.Fatal("Lock had not returned after 20s")
	}
	thaw()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Lock: %v, want context.DeadlineExceeded", err)
	}
	t.Logf("Lock with a %s deadline returned after %s", deadline, elapsed)
	if elapsed > deadline+400*time.Millisecond {
		t.Errorf("Lock with a %s deadline returned after %s", deadline, elapsed)
	}
	// Its release, given back in the background, reaches the server once
	// it answers again, or it ends with its lease.
	if !eventually(10*time.Second, func() bool { return !lockedAll(t, ctx, a)[0] }) {
		t.Fatal("member a held after the failed Lock")
	}
}
