package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A DrainPermits waits for the give-backs of the semaphore that began before
// it, not for those that begin while it waits: it waited until none was
// running, and give-backs that kept overlapping (acquisitions of unknown
// outcome on a slow link) kept it waiting for as long as they did.
func TestSemaphoreDrainWaitsForEarlierGiveBacksOnly(t *testing.T) {
	t.Parallel()
	n := redistest.Server(t)
	c := newTestClient(t, n.Client(t))
	ctx := testCtx(t, 20*time.Second)
	s := mustSem(t, c, "drain-order")
	if ok, err := s.TrySetPermits(ctx, 5); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	// Two give-backs of calls that took nothing, each held up until its
	// gate opens: the first begins before the drain, the second while it
	// waits.
	first, second := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(second) }) // before Close, which waits for it
	c.testGiveBack = func() { <-first }
	s.undoLater(s.latch(), 0, time.Now())
	res := drainLater(ctx, s)
	time.Sleep(200 * time.Millisecond)
	c.testGiveBack = func() { <-second }
	s.undoLater(s.latch(), 0, time.Now())
	c.testGiveBack = nil
	time.Sleep(100 * time.Millisecond)
	close(first)
	select {
	case r := <-res:
		if r.err != nil || r.n != 5 {
			t.Errorf("DrainPermits = %d, %v; want 5, nil", r.n, r.err)
		}
	case <-time.After(3 * time.Second):
		t.Errorf("DrainPermits still waiting 3s after the give-back begun before it ended, for one begun after it")
	}
}
