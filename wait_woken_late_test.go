package scriptlock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A TryLock wait whose goroutine runs again only after the wait's end and
// its overrun have passed (a loaded machine schedules it late) ends as the
// contention it last saw: the holder answered every attempt. It made one
// more attempt, cut off before it was sent, and reported the server as not
// answering (Unanswered), which the middleware answers 503, Redis down.
func TestTryLockWokenPastOverrunIsContention(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	m := mustMutex(t, c, "woken-late")
	ctx := testCtx(t, 20*time.Second)
	held, err := m.TryLock(WithOwner(ctx, "holder"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Unlock(held)
	var once sync.Once
	c.testHookFallback = func(context.Context) {
		// The timer that ends the wait fires; the waiter goes on late.
		once.Do(func() { time.Sleep(waitOverrun + 200*time.Millisecond) })
	}
	before := scriptCalls(t, node)
	_, err = m.TryLock(WithOwner(ctx, "waiter"), 200*time.Millisecond)
	var na *NotAcquiredError
	if !errors.As(err, &na) {
		t.Fatalf("TryLock = %v; want a *NotAcquiredError", err)
	}
	if na.Unanswered || na.Remaining <= 0 {
		t.Fatalf("TryLock = %v (Unanswered %v, Remaining %s); want the holder's lease, every attempt answered",
			err, na.Unanswered, na.Remaining)
	}
	if n := scriptCalls(t, node) - before; n < 2 {
		t.Fatalf("%d script calls: the wait did not attempt before and after subscribing", n)
	}
}
