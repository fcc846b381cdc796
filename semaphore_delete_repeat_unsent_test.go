package scriptlock

import (
	"testing"
	"time"
)

// A Delete whose reply was lost with its connection, and which rueidis
// then made again (the script is retryable) on a new connection whose dial
// failed, ran: it fails with that dial's error, which reads as a call never
// sent, so a caller that believes it deletes again, and deletes the count
// someone set since. Its error tells the outcome is unknown.
func TestSemaphoreDeleteRepeatUnsentOutcomeUnknown(t *testing.T) {
	t.Parallel()
	r := newUnsentRig(t)
	ctx := testCtx(t, 20*time.Second)
	s := mustSem(t, r.c, "delete-repeat-unsent")
	if ok, err := s.TrySetPermits(ctx, 5); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	if _, err := s.Delete(ctx); err != nil { // scripts loaded
		t.Fatal(err)
	}
	if _, err := s.AddPermits(ctx, 5); err != nil {
		t.Fatal(err)
	}
	dctx := boundedCtx(t, ctx)
	r.lose(t, true, func() bool {
		n, err := r.node.Do(t, "EXISTS", s.Key()).AsInt64()
		return err == nil && n == 0
	}, func() error {
		_, err := s.Delete(dctx)
		return err
	})
}
