package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TryLock(ctx, wait) on a MultiLock returns within the documented overrun
// after its wait (waitOverrun, plus the failover guard's timeout) with no
// deadline on ctx, when a member is taken after the wait ended and both
// members' servers then stop answering: the attempt on the second member is
// cut off, the first is given back in the background, and nothing stays held
// once the servers answer again.
func TestMultiLockTryLockWaitBound(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 2)
	pxs := []*netproxy.Proxy{netproxy.New(t, nodes[0].Addr), netproxy.New(t, nodes[1].Addr)}
	c0 := newTestClient(t, pxs[0].Client(t))
	c1 := newTestClient(t, pxs[1].Client(t))
	ctx := testCtx(t, 30*time.Second)
	a, b := mustMutex(t, c0, "a"), mustMutex(t, c1, "b")
	for _, m := range []*Mutex{a, b} { // warm the connections
		l, err := m.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Unlock(l); err != nil {
			t.Fatal(err)
		}
	}
	const wait = 300 * time.Millisecond
	// Member a is granted, and returns after the wait has ended: b is then
	// tried once, and both servers stop answering.
	slow := afterLock{a, func() {
		time.Sleep(wait + 100*time.Millisecond)
		pxs[0].Freeze()
		pxs[1].Freeze()
	}}
	ml := mustMulti(t, []Locker{slow, b})
	type result struct {
		err     error
		elapsed time.Duration
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		_, err := ml.TryLock(context.Background(), wait)
		done <- result{err, time.Since(start)}
	}()
	var res result
	select {
	case res = <-done:
	case <-time.After(5 * time.Second):
		for _, px := range pxs {
			px.Thaw()
		}
		t.Fatalf("TryLock(ctx, %s) had not returned after 5s", wait)
	}
	for _, px := range pxs {
		px.Thaw()
	}
	if !errors.Is(res.err, ErrNotAcquired) {
		t.Errorf("TryLock: %v, want ErrNotAcquired", res.err)
	}
	bound := wait + waitOverrun + DefaultGuardTimeout
	t.Logf("TryLock(ctx, %s) returned after %s", wait, res.elapsed)
	if res.elapsed > bound+400*time.Millisecond {
		t.Errorf("TryLock(ctx, %s) returned after %s; bound %s (+400ms margin)", wait, res.elapsed, bound)
	}
	if !eventually(8*time.Second, func() bool {
		got := lockedAll(t, ctx, a, b)
		return !got[0] && !got[1]
	}) {
		t.Fatalf("members held after the failed TryLock: %v", lockedAll(t, ctx, a, b))
	}
}
