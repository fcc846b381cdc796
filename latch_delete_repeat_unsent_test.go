package scriptlock

import (
	"testing"
	"time"
)

// A CountDownLatch's Delete whose reply was lost with its connection, and
// which rueidis then made again (the script is retryable) on a new
// connection whose dial failed, ran: it fails with that dial's error, which
// reads as a call never sent, so a caller that believes it deletes again,
// and deletes the count set since. Its error tells the outcome is unknown.
func TestLatchDeleteRepeatUnsentOutcomeUnknown(t *testing.T) {
	t.Parallel()
	r := newUnsentRig(t)
	ctx := testCtx(t, 20*time.Second)
	l := mustLatch(t, r.c, "latch-repeat-unsent")
	if ok, err := l.TrySetCount(ctx, 5); err != nil || !ok {
		t.Fatalf("TrySetCount = %v, %v", ok, err)
	}
	if _, err := l.Delete(ctx); err != nil { // scripts loaded
		t.Fatal(err)
	}
	if ok, err := l.TrySetCount(ctx, 5); err != nil || !ok {
		t.Fatalf("TrySetCount = %v, %v", ok, err)
	}
	r.lose(t, true, func() bool {
		n, err := r.node.Do(t, "EXISTS", l.Key()).AsInt64()
		return err == nil && n == 0
	}, func() error {
		_, err := l.Delete(boundedCtx(t, ctx))
		return err
	})
}
