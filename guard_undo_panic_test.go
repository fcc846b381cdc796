package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A Semaphore acquisition (or drain) no replica acknowledged is undone at
// once on the caller's goroutine; a client wrapper's panic there reaches
// the caller, as a settling undo's does, and the undo goes on in the
// background, so the permits come back. Left as they were, the permits,
// which have no lease, were lost for good.
func TestUnackedUndoPanicUndoneLater(t *testing.T) {
	for _, op := range []string{"acquire", "drain"} {
		t.Run(op, func(t *testing.T) {
			t.Parallel()
			primary, replica := redistest.Replicated(t)
			rc := newPanickyClient(primary.Client(t), scriptRuns(semaphoreUndoSHA(t, primary.Client(t))))
			c := newTestClient(t, rc, WithFailoverGuard(true, 200*time.Millisecond))
			ctx := testCtx(t, 30*time.Second)
			s := mustSem(t, c, "unacked-undo-panic")
			if _, err := s.TrySetPermits(ctx, 2); err != nil {
				t.Fatal(err)
			}
			if err := s.Acquire(ctx, 1); err != nil { // the replica count taken
				t.Fatal(err)
			}
			if err := s.Release(ctx, 1); err != nil {
				t.Fatal(err)
			}
			replica.Pause()
			defer replica.Resume()
			rc.left.Store(1)
			p := panicked(func() {
				if op == "acquire" {
					_ = s.TryAcquire(ctx, 2, 0)
				} else {
					_, _ = s.DrainPermits(ctx)
				}
			})
			if p == nil {
				t.Fatalf("%s did not panic", op)
			}
			if rc.left.Load() != 0 {
				t.Fatal("the undo was not made")
			}
			if !eventually(5*time.Second, func() bool { return countAt(t, primary, s.Key()) == 2 }) {
				t.Fatalf("the permits the unacknowledged %s took did not come back: %d available, want 2", op, countAt(t, primary, s.Key()))
			}
		})
	}
}
