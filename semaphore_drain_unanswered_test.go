package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A DrainPermits whose context ends after the drain ran on the server but
// before its reply came back fails, and the caller never learns how many
// permits it took: they go back to the count through the drain's record, as
// an acquisition of unknown outcome is undone, instead of being lost to the
// semaphore for good.
func TestSemaphoreDrainUnansweredGivenBack(t *testing.T) {
	t.Parallel()
	p := newProxied(t)
	ctx := testCtx(t, 20*time.Second)
	s := mustSem(t, p.c, "drain-unanswered")
	drainReady(t, ctx, s)
	// Replies held back once the record is reserved: the drain runs, and
	// its caller gives up before it hears how many permits it took.
	p.c.testReserved = p.px.FreezeReplies
	dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	res := drainLater(dctx, s)
	landed := eventually(3*time.Second, func() bool { return countAt(t, p.node, s.Key()) == 0 })
	r := <-res
	p.c.testReserved = nil
	p.px.Thaw()
	if !landed {
		t.Fatalf("the drain did not reach the server (DrainPermits = %d, %v)", r.n, r.err)
	}
	err := r.err
	if err == nil {
		t.Fatalf("DrainPermits whose reply never came = %d, nil; want an error", r.n)
	}
	if !eventually(5*time.Second, func() bool { return countAt(t, p.node, s.Key()) == 5 }) {
		t.Fatalf("count = %d after a DrainPermits that failed (%v); want 5: the permits it took went back to nobody", countAt(t, p.node, s.Key()), err)
	}
	// Given back once: a repeat of the undo, or the drain made again, adds nothing.
	time.Sleep(300 * time.Millisecond)
	if got := countAt(t, p.node, s.Key()); got != 5 {
		t.Fatalf("count = %d; want 5", got)
	}
}

// The undo of a drain of unknown outcome that reaches the server before the
// drain (its record still only reserved) gives nothing back and leaves the
// drain nothing to take when it lands; that of a drain of a deficit (which
// took no permits) gives nothing back either.
func TestSemaphoreDrainUndoBeforeDrainOrOfDeficit(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	s := mustSem(t, c, "drain-undo-early")
	if _, err := s.AddPermits(ctx, 4); err != nil {
		t.Fatal(err)
	}
	record := s.latch()
	if _, err := generated.RecordReserveStrict(ctx, c.rc, record, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if given, err := s.undoOnce(ctx, record, 0); err != nil || given != 0 {
		t.Fatalf("undo of a drain not yet run = %d, %v; want 0, nil", given, err)
	}
	if n, err := generated.SemaphoreDrain(ctx, c.rc, s.key, record, s.deleted, c.recordTTL, time.Millisecond); err != nil || n != 0 {
		t.Fatalf("the drain landing after its undo = %d, %v; want 0, nil (it takes nothing)", n, err)
	}
	if got := countAt(t, node, s.Key()); got != 4 {
		t.Fatalf("count = %d; want 4", got)
	}
	deficit := s.latch()
	if err := node.Do(t, "SET", deficit, "-3").Error(); err != nil {
		t.Fatal(err)
	}
	if given, err := s.undoOnce(ctx, deficit, 0); err != nil || given != 0 {
		t.Fatalf("undo of a drain of a deficit = %d, %v; want 0, nil", given, err)
	}
	if got := countAt(t, node, s.Key()); got != 4 {
		t.Fatalf("count after the undo of a drain of a deficit = %d; want 4", got)
	}
}

// drainResult is what a DrainPermits run by drainLater answered.
type drainResult struct {
	n   int64
	err error
}

// drainLater runs s.DrainPermits(ctx) on a goroutine of its own and sends
// its answer on the channel it returns.
func drainLater(ctx context.Context, s *Semaphore) <-chan drainResult {
	res := make(chan drainResult, 1)
	go func() {
		n, err := s.DrainPermits(ctx)
		res <- drainResult{n, err}
	}()
	return res
}
