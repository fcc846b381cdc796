package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// CountDown with a context already cancelled (a worker counting down as its
// request or process is being stopped) still counts, as a Release still
// gives its permits back: the waiters would otherwise wait for good.
func TestLatchCountDownCancelledContext(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	l := mustLatch(t, c, "shutdown")
	if ok, err := l.TrySetCount(ctx, 1); err != nil || !ok {
		t.Fatalf("TrySetCount = %v, %v", ok, err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := l.CountDown(cancelled); err != nil {
		t.Fatalf("CountDown with a cancelled context: %v", err)
	}
	if n, err := l.Count(ctx); err != nil || n != 0 {
		t.Fatalf("Count after the CountDown = %d, %v; want 0 (waiters released)", n, err)
	}
}

// CountDown is bounded by the release timeout, not by its context's
// deadline: a worker whose context runs out while the server is stalled
// still counts once the server answers within the release timeout.
func TestLatchCountDownOutlastsContextDeadline(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	l := mustLatch(t, c, "stalled")
	if ok, err := l.TrySetCount(ctx, 1); err != nil || !ok {
		t.Fatalf("TrySetCount = %v, %v", ok, err)
	}
	node.Pause()
	resumed := make(chan struct{})
	go func() {
		defer close(resumed)
		time.Sleep(300 * time.Millisecond)
		node.Resume()
	}()
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	err := l.CountDown(short)
	<-resumed
	if err != nil {
		t.Fatalf("CountDown whose context ended while the server was stalled: %v; want it made within the release timeout", err)
	}
	if n, err := l.Count(ctx); err != nil || n != 0 {
		t.Fatalf("Count after the CountDown = %d, %v; want 0 (waiters released)", n, err)
	}
}
