package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A DrainPermits waiting for the Client's give-backs of the semaphore when
// Close begins fails with ErrClosed, as a waiting acquisition does, and
// drains nothing: it waited for as long as Close let the give-back run and
// then drained, after Close had begun (or returned), permits nobody would
// give back.
func TestSemaphoreDrainGiveBackWaitClosed(t *testing.T) {
	t.Parallel()
	n := redistest.Server(t)
	c := newTestClient(t, n.Client(t))
	ctx := testCtx(t, 20*time.Second)
	s := mustSem(t, c, "drain-close")
	if ok, err := s.TrySetPermits(ctx, 5); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	gate := make(chan struct{})
	c.testGiveBack = func() { <-gate }
	s.undoLater(s.latch(), 0, time.Now())
	c.testGiveBack = nil
	res := drainLater(ctx, s)
	time.Sleep(200 * time.Millisecond)
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		c.Close()
	}()
	var r drainResult
	select {
	case r = <-res:
		close(gate)
	case <-time.After(2 * time.Second):
		t.Error("DrainPermits still waiting for the give-back 2s after Close began")
		close(gate)
		r = <-res
	}
	<-closed
	if !errors.Is(r.err, ErrClosed) || r.n != 0 {
		t.Errorf("DrainPermits waiting as Close began = %d, %v; want 0, ErrClosed", r.n, r.err)
	}
	if got := countAt(t, n, s.Key()); got != 5 {
		t.Errorf("count = %d after Close; want 5, nothing drained", got)
	}
}
