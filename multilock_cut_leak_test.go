package scriptlock

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// bareCtx is a long-lived context the context package knows nothing of
// (a root context of some framework): each context derived from it with a
// cancel watches it on a goroutine of its own until one of the two ends.
type bareCtx struct{ done chan struct{} }

func (bareCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c bareCtx) Done() <-chan struct{}     { return c.done }
func (c bareCtx) Err() error {
	select {
	case <-c.done:
		return context.Canceled
	default:
		return nil
	}
}
func (bareCtx) Value(any) any { return nil }

// MultiLock.TryLock under a long-lived context leaves nothing behind once
// the lock is given back: the context each member's attempt ran under is
// ended, not left among the long-lived context's children (here: one
// goroutine each) until that one ends.
func TestMultiLockTryLockLeavesNoContextBehind(t *testing.T) {
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ml, err := NewMultiLock([]Locker{mustMutex(t, c, "cut-a"), mustMutex(t, c, "cut-b")})
	if err != nil {
		t.Fatal(err)
	}
	root := bareCtx{done: make(chan struct{})}
	defer close(root.done)
	cycle := func() {
		lctx, err := ml.TryLock(root, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if err := ml.Unlock(lctx); err != nil {
			t.Fatal(err)
		}
	}
	cycle() // connections and subscriptions set up
	settled := func() int {
		n := runtime.NumGoroutine()
		for range 50 {
			time.Sleep(20 * time.Millisecond)
			n = min(n, runtime.NumGoroutine())
		}
		return n
	}
	before := settled()
	const cycles = 40
	for range cycles {
		cycle()
	}
	if after := settled(); after-before >= cycles {
		t.Errorf("%d more goroutines after %d TryLock+Unlock cycles under a long-lived context: each attempt's context is left behind", after-before, cycles)
	}
}
