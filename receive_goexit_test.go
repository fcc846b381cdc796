package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestReceiveGoexitEndsSubscription: a client wrapper whose Receive ends
// the goroutine of a wait's subscription (runtime.Goexit) has that
// subscription end as one that failed, as its panic does: its waiters end
// with that failure or call again. Not a subscription left open that
// nobody listens on, its waiters never woken.
func TestReceiveGoexitEndsSubscription(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	h := newTestClient(t, node.Client(t))
	rc := newPanickyClient(node.Client(t), func(c wrapperCall) bool { return c.method == "Receive" })
	rc.goexit.Store(true)
	rc.left.Store(1)
	c := newTestClient(t, rc, WithKeyPrefix(h.cfg.prefix))
	ctx := testCtx(t, 30*time.Second)
	hm, m := mustMutex(t, h, "receive-goexit"), mustMutex(t, c, "receive-goexit")
	hl, err := hm.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		lctx, err := m.TryLock(ctx, 20*time.Second)
		if err == nil {
			err = m.Unlock(lctx)
		}
		got <- err
	}()
	if !eventually(5*time.Second, func() bool { return rc.left.Load() == 0 }) {
		t.Fatal("the wait never subscribed")
	}
	time.Sleep(300 * time.Millisecond) // the wait on its subscription
	released := time.Now()
	if err := hm.Unlock(hl); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil && !errors.Is(err, errCallExited) {
			t.Fatalf("the wait: %v; want the lock, or the subscription's failure", err)
		}
		t.Logf("the wait ended %v after the release: %v", time.Since(released).Round(time.Millisecond), err)
	case <-time.After(5 * time.Second):
		t.Fatalf("the wait was not woken within 5s of the release (subscriptions open: %d)", c.subs.open.Load())
	}
	if !eventually(5*time.Second, func() bool { return c.subs.open.Load() == 0 }) {
		t.Fatalf("subscriptions still open: %d", c.subs.open.Load())
	}
	lctx, err := m.TryLock(ctx, 5*time.Second)
	if err != nil {
		t.Fatalf("TryLock after the subscription ended: %v", err)
	}
	if err := m.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
}
