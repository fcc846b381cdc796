package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A PermitSemaphore acquisition no replica acknowledged is undone at once
// on the caller's goroutine; a client wrapper's panic there reaches the
// caller, and the undo goes on in the background, as a Semaphore's does
// (TestUnackedUndoPanicUndoneLater): the permit comes back well before its
// lease ends.
func TestPermitUnackedUndoPanicUndoneLater(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	cmd, err := generated.PermitUndoCommand(primary.Client(t), "k", "t", "c", "r", []byte("w"), "publish", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	rc := newPanickyClient(primary.Client(t), scriptRuns(cmd.Commands()[1]))
	c := newTestClient(t, rc, WithFailoverGuard(true, 200*time.Millisecond))
	ctx := testCtx(t, 30*time.Second)
	s := mustPermits(t, c, "permit-unacked-undo-panic")
	if _, err := s.TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	id, err := s.Acquire(ctx, time.Minute) // the replica count taken
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, id); err != nil {
		t.Fatal(err)
	}
	replica.Pause()
	defer replica.Resume()
	rc.left.Store(1)
	if p := panicked(func() { _, _ = s.TryAcquire(ctx, time.Minute, 0) }); p == nil {
		t.Fatal("TryAcquire did not panic")
	}
	if rc.left.Load() != 0 {
		t.Fatal("the undo was not made")
	}
	if !eventually(5*time.Second, func() bool {
		st, err := s.State(ctx)
		return err == nil && st.Available == 2 && st.Held == 0
	}) {
		st, err := s.State(ctx)
		t.Fatalf("the permit the unacknowledged acquisition took did not come back: %+v, %v; want 2 available, none held", st, err)
	}
}
