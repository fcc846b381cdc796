package scriptlock

import (
	"testing"
	"time"
)

// A Release whose reply was lost with its connection, and which rueidis
// then made again (the script is retryable) on a new connection whose dial
// failed, ran: it fails with that dial's error, which reads as a call never
// sent (docs/guarantees.md), so a caller that believes it releases again and
// the permits count twice, for good. Its error tells the outcome is unknown.
func TestSemaphoreReleaseRepeatUnsentOutcomeUnknown(t *testing.T) {
	t.Parallel()
	r := newUnsentRig(t, WithReleaseTimeout(3*time.Second))
	ctx := testCtx(t, 20*time.Second)
	s := mustSem(t, r.c, "release-repeat-unsent")
	if ok, err := s.TrySetPermits(ctx, 5); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	if err := s.Release(ctx, 1); err != nil { // scripts loaded
		t.Fatal(err)
	}
	r.lose(t, false, func() bool { return countAt(t, r.node, s.Key()) == 8 }, func() error { return s.Release(ctx, 2) })
	time.Sleep(300 * time.Millisecond) // a repeat that released again, had there been one
	if got := countAt(t, r.node, s.Key()); got != 8 {
		t.Fatalf("count = %d; want 8 (released once)", got)
	}
}
