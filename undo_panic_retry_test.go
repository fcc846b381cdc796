package scriptlock

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// The background undo of a Semaphore acquisition of unknown outcome meets
// a client wrapper that panics on its first calls: each panic is taken as
// an undo that failed, logged, and the undo is made again, as after an
// error, within its bound, so the permit the acquisition took comes back
// once the wrapper lets the undo through. The first panic ended the undo,
// and the permit, which has no lease, was lost for good.
func TestBackgroundUndoPanicRetried(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	rc := newPanickyClient(px.Client(t), scriptRuns(semaphoreUndoSHA(t, node.Client(t))))
	var logs syncBuffer
	c := newTestClient(t, rc, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	ctx := testCtx(t, 20*time.Second)
	sem := mustSem(t, c, "undo-panic-retried")
	if _, err := sem.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := sem.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := sem.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	rc.left.Store(3)
	px.FreezeReplies()
	err := sem.TryAcquire(ctx, 1, 300*time.Millisecond)
	var na *NotAcquiredError
	if !errors.As(err, &na) || !na.Unanswered {
		px.Thaw()
		t.Fatalf("TryAcquire, replies held back: %v, want a NotAcquiredError with Unanswered", err)
	}
	if n := countAt(t, node, sem.Key()); n != 0 {
		px.Thaw()
		t.Fatalf("the attempt took no permit: %d available", n)
	}
	if !eventually(5*time.Second, func() bool { return rc.picked.Load() > 3 }) { // the three that panicked and one more
		px.Thaw()
		t.Fatalf("the undo was not made again after its call panicked (%d panics to go); log:\n%s", rc.left.Load(), logs.String())
	}
	px.Thaw()
	if !eventually(5*time.Second, func() bool { return countAt(t, node, sem.Key()) == 1 }) {
		t.Fatalf("the permit the attempt took did not come back: %d available", countAt(t, node, sem.Key()))
	}
	if !strings.Contains(logs.String(), "panic recovered") {
		t.Fatalf("the undo's panic was not logged; log:\n%s", logs.String())
	}
}
