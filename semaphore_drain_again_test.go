package scriptlock

import (
	"context"
	"testing"
	"time"
)

// A DrainPermits made again on the error of one whose outcome is unknown
// (its reply lost, the permits it took being given back in the background)
// drains those permits: it waits for this Client's give-backs of the
// semaphore first. It answered 0, the count the first drain left, and the
// permits then came back through the give-back, free for anyone after a
// drain that said it set the count to 0.
func TestSemaphoreDrainAgainAfterUnanswered(t *testing.T) {
	t.Parallel()
	p := newProxied(t)
	ctx := testCtx(t, 20*time.Second)
	s := mustSem(t, p.c, "drain-again")
	drainReady(t, ctx, s)
	// The give-back is held up (a slow or reconnecting link would do the
	// same) until the drain is made again.
	gate := make(chan struct{})
	p.c.testGiveBack = func() { <-gate }
	p.c.testReserved = p.px.FreezeReplies
	dctx, cancel := context.WithTimeout(ctx, time.Second)
	_, err := s.DrainPermits(dctx)
	cancel()
	p.c.testReserved = nil
	p.px.Thaw()
	if err == nil {
		t.Fatal("DrainPermits whose reply never came: no error")
	}
	if got := countAt(t, p.node, s.Key()); got != 0 {
		t.Fatalf("the first drain did not land: count %d", got)
	}
	res := drainLater(ctx, s)
	time.Sleep(300 * time.Millisecond)
	close(gate)
	r := <-res
	if r.err != nil || r.n != 5 {
		t.Errorf("DrainPermits made again after one of unknown outcome = %d, %v; want 5, nil", r.n, r.err)
	}
	time.Sleep(300 * time.Millisecond) // the give-back, had it not settled
	if got := countAt(t, p.node, s.Key()); got != 0 {
		t.Errorf("count = %d after the drain made again succeeded; want 0", got)
	}
}
