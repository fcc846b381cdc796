package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// panicObserver panics in AcquireEnd for one lock, and holds up ReleaseStart
// of another until gate is closed.
type panicObserver struct {
	NopObserver
	panicOn, gateOn string
	started, gate   chan struct{}
}

func (o *panicObserver) AcquireEnd(_ context.Context, op Op, _ AcquireEvent) {
	if op.Name == o.panicOn {
		panic("observer panicked")
	}
}

func (o *panicObserver) ReleaseStart(ctx context.Context, op Op) context.Context {
	if op.Name == o.gateOn {
		close(o.started)
		<-o.gate
	}
	return ctx
}

// A Close called by a caller that recovered a panic reaching it from a Lock
// (an Observer's AcquireEnd, which reaches the caller) is not called from a
// callback: the panicking call's frames are still on the stack, but it has
// ended. That Close waits as any other: here for a release it reports that
// is in flight.
func TestCloseAfterRecoveredPanicWaits(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	o := &panicObserver{panicOn: "panics", gateOn: "slow", started: make(chan struct{}), gate: make(chan struct{})}
	c := newTestClient(t, node.Client(t), WithObserver(o))
	ctx := testCtx(t, 20*time.Second)
	slow := mustMutex(t, c, "slow")
	held, err := slow.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	unlocked := make(chan error, 1)
	go func() { unlocked <- slow.Unlock(held) }()
	<-o.started

	closed := make(chan struct{})
	go func() {
		defer func() {
			if recover() == nil {
				t.Error("Lock did not panic")
			}
			c.Close()
			close(closed)
		}()
		_, _ = mustMutex(t, c, "panics").Lock(ctx)
	}()
	select {
	case <-closed:
		close(o.gate)
		t.Fatal("Close in a caller that recovered a panic returned while a release it reports was in flight: it took itself for a Close from a callback")
	case <-time.After(300 * time.Millisecond):
	}
	close(o.gate)
	select {
	case <-closed:
	case <-time.After(closeHang):
		t.Fatalf("Close did not return within %s of the release's end", closeHang)
	}
	if err := <-unlocked; err != nil {
		t.Fatalf("Unlock: %v", err)
	}
}

// deferCloseObserver's AcquireEnd closes its Client in a deferred call and
// panics: that Close runs inside the callback, before the acquisition has
// ended, and must not wait for it.
type deferCloseObserver struct {
	NopObserver
	c *Client
}

func (o *deferCloseObserver) AcquireEnd(context.Context, Op, AcquireEvent) {
	defer o.c.Close()
	panic("observer panicked")
}

func TestCloseDeferredInPanickingCallback(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	o := &deferCloseObserver{}
	c := newTestClient(t, node.Client(t), WithObserver(o))
	o.c = c
	ctx := testCtx(t, 20*time.Second)
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		_, _ = mustMutex(t, c, "panics").Lock(ctx)
	}()
	select {
	case r := <-done:
		if r == nil {
			t.Fatal("Lock did not panic")
		}
	case <-time.After(closeHang):
		t.Fatalf("Lock whose AcquireEnd closes the Client in a deferred call did not return within %s (deadlock):\n%s", closeHang, closeBlocked(c))
	}
	if _, err := mustMutex(t, c, "after").Lock(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("Lock after Close: %v, want ErrClosed", err)
	}
}
