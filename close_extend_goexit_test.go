package scriptlock

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// goexitObserver ends the goroutine that reports a hold's end, as a test's
// t.FailNow in an Observer does (runtime.Goexit, which recover does not
// stop).
type goexitObserver struct{ NopObserver }

func (goexitObserver) HoldEnd(context.Context, Op, HoldEvent) { runtime.Goexit() }

// An Extend that finds its hold gone ends it; should the Observer's HoldEnd
// end the goroutine there, Close still returns: the end Extend counted in
// for Close to wait for is counted out however it unwinds.
func TestCloseAfterExtendNotHeldGoexit(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	// Not newTestClient: its Close at cleanup would hang with the test.
	c, err := New(node.Client(t), WithKeyPrefix(redistest.Prefix(t)), WithObserver(goexitObserver{}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t, 10*time.Second)
	m := mustMutex(t, c, "extend-goexit")
	lctx, err := m.LockWithLease(ctx, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := node.Do(t, "DEL", m.Key()).Error(); err != nil {
		t.Fatal(err)
	}
	extended := make(chan struct{})
	go func() {
		defer close(extended)
		_ = m.Extend(ctx, lctx, 10*time.Second)
	}()
	<-extended
	closed := make(chan struct{})
	go func() {
		_ = c.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return within 5s of an Extend whose Observer's HoldEnd ended its goroutine")
	}
}
