package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A latch's AwaitTimeout whose wait ends while the server does not answer
// its last read of the count says so (a *NotAcquiredError with Unanswered,
// as a semaphore's TryAcquire does) instead of false with no error, which
// reads as a count that did not reach zero. A wait that runs out while the
// server answered stays false with no error.
func TestLatchAwaitTimeoutFrozenUnanswered(t *testing.T) {
	t.Parallel()
	p := newProxied(t)
	ctx := testCtx(t, 30*time.Second)
	l := mustLatch(t, p.c, "frozen-unanswered-latch")
	if _, err := l.TrySetCount(ctx, 1); err != nil {
		t.Fatal(err)
	}
	awaitRunsOut(t, context.Background(), l, 100*time.Millisecond)
	p.px.Freeze()
	ok, err := l.AwaitTimeout(context.Background(), 300*time.Millisecond)
	p.px.Thaw()
	var na *NotAcquiredError
	if ok || !errors.As(err, &na) || !na.Unanswered {
		t.Errorf("AwaitTimeout, server frozen: %v, %v (%#v); want false and a NotAcquiredError with Unanswered", ok, err, na)
	}
}
