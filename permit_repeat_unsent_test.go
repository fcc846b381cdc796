package scriptlock

import (
	"testing"
	"time"
)

// A PermitSemaphore's SetPermits, AddPermits or Delete whose reply was lost
// with its connection, and which rueidis then made again (the script is
// retryable) on a new connection whose dial failed, ran: it fails with that
// dial's error, which reads as a call never sent, so a caller that believes
// it calls again, and adds the permits twice, or undoes what others changed
// since (SetPermits), or deletes the permits set since (Delete). Its error
// tells the outcome is unknown.
func TestPermitRepeatUnsentOutcomeUnknown(t *testing.T) {
	t.Parallel()
	t.Run("SetPermits", func(t *testing.T) {
		t.Parallel()
		r := newUnsentRig(t)
		ctx := testCtx(t, 20*time.Second)
		s := mustPermits(t, r.c, "permit-repeat-unsent")
		if err := s.SetPermits(ctx, 5); err != nil { // scripts loaded
			t.Fatal(err)
		}
		r.lose(t, true, func() bool { return countAt(t, r.node, s.Key()) == 8 }, func() error {
			return s.SetPermits(boundedCtx(t, ctx), 8)
		})
	})
	t.Run("AddPermits", func(t *testing.T) {
		t.Parallel()
		r := newUnsentRig(t)
		ctx := testCtx(t, 20*time.Second)
		s := mustPermits(t, r.c, "permit-repeat-unsent")
		if _, err := s.AddPermits(ctx, 5); err != nil { // scripts loaded
			t.Fatal(err)
		}
		r.lose(t, false, func() bool { return countAt(t, r.node, s.Key()) == 7 }, func() error {
			_, err := s.AddPermits(boundedCtx(t, ctx), 2)
			return err
		})
		time.Sleep(300 * time.Millisecond) // a repeat that added again, had there been one
		if got := countAt(t, r.node, s.Key()); got != 7 {
			t.Fatalf("count = %d; want 7 (added once)", got)
		}
	})
	t.Run("Delete", func(t *testing.T) {
		t.Parallel()
		r := newUnsentRig(t)
		ctx := testCtx(t, 20*time.Second)
		s := mustPermits(t, r.c, "permit-repeat-unsent")
		if ok, err := s.TrySetPermits(ctx, 5); err != nil || !ok {
			t.Fatalf("TrySetPermits = %v, %v", ok, err)
		}
		if _, err := s.Delete(ctx); err != nil { // scripts loaded
			t.Fatal(err)
		}
		if _, err := s.AddPermits(ctx, 5); err != nil {
			t.Fatal(err)
		}
		r.lose(t, true, func() bool {
			n, err := r.node.Do(t, "EXISTS", s.Key()).AsInt64()
			return err == nil && n == 0
		}, func() error {
			_, err := s.Delete(boundedCtx(t, ctx))
			return err
		})
	})
}
