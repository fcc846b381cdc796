package scriptlock

import (
	"testing"
	"time"
)

// A CountDown whose reply was lost with its connection, and which rueidis
// then made again (the script is retryable) on a new connection whose dial
// failed, ran. Its repeats carry no deadline rueidis sees (they end at the
// release timeout), so rueidis's own retries end with the context's error,
// unless its retries are bounded (RetryDelay answering a negative delay, as
// the rig's client's does): then it answers the dial's error, which reads as
// a call never sent, and a caller that believes it counts down twice. Its
// error tells the outcome is unknown.
func TestLatchCountDownRepeatUnsentOutcomeUnknown(t *testing.T) {
	t.Parallel()
	r := newUnsentRig(t, WithReleaseTimeout(3*time.Second))
	node := r.node
	ctx := testCtx(t, 20*time.Second)
	l := mustLatch(t, r.c, "countdown-repeat-unsent")
	if ok, err := l.TrySetCount(ctx, 5); err != nil || !ok {
		t.Fatalf("TrySetCount = %v, %v", ok, err)
	}
	if err := l.CountDown(ctx); err != nil { // scripts loaded
		t.Fatal(err)
	}
	r.lose(t, false, func() bool { return countAt(t, node, l.Key()) == 3 }, func() error { return l.CountDown(ctx) })
	time.Sleep(300 * time.Millisecond) // a repeat that counted again, had there been one
	if got := countAt(t, node, l.Key()); got != 3 {
		t.Fatalf("count = %d; want 3 (counted down once)", got)
	}
}
