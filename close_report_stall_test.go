package scriptlock

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestCloseEndsHoldsWhileReportsWait: Close stops the watchdog, so the holds
// it leaves are renewed no more; it must end them (cause ErrClosed) before it
// waits for the reports an Observer that blocks has not taken yet, not leave
// their owners working under locks no longer renewed until their leases run
// out (then reported lost, not closed).
func TestCloseEndsHoldsWhileReportsWait(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	release := make(chan struct{})
	var blocked atomic.Int32
	c := newTestClient(t, node.Client(t), WithObserver(stuckObserver{release: release, blocked: &blocked}),
		WithWatchdog(3*time.Second, 0))
	var released atomic.Bool
	unblock := func() {
		if released.CompareAndSwap(false, true) {
			close(release)
		}
	}
	t.Cleanup(unblock) // before the Client closes
	ctx := testCtx(t, 30*time.Second)
	lctx, err := mustMutex(t, c, "close-stalled-report").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The first renewal round's Renewal blocks the Observer.
	if !eventually(5*time.Second, func() bool { return blocked.Load() == 1 }) {
		t.Fatal("no Renewal reported within 5s")
	}
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		c.Close()
	}()
	select {
	case <-lctx.Done():
	case <-time.After(time.Second):
		t.Fatalf("hold's context still live 1s after Close began (its lease renewed no more), Close waiting for the Observer")
	}
	if cause := context.Cause(lctx); !errors.Is(cause, ErrClosed) {
		t.Errorf("hold's context: cause %v, want ErrClosed", cause)
	}
	select {
	case <-closed:
		t.Error("Close returned while the Observer still held a report")
	default:
	}
	unblock()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close still blocked 5s after the Observer returned")
	}
}
