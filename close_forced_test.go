package scriptlock

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// endTimes is an Observer that notes when each hold end is reported.
type endTimes struct {
	NopObserver
	mu sync.Mutex
	at []time.Time
}

func (o *endTimes) HoldEnd(context.Context, Op, HoldEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.at = append(o.at, time.Now())
}

// A ForceUnlock that ends this Client's hold of the lock reports that hold's
// end before a Close made meanwhile returns: nothing is reported once Close
// has returned.
func TestCloseWaitsForForceUnlockEnds(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	obs := &endTimes{}
	c := newTestClient(t, node.Client(t), WithObserver(obs))
	ctx := testCtx(t, 10*time.Second)
	m := mustMutex(t, c, "forced")
	if _, err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	closed := make(chan time.Time, 1)
	c.testHookForced = func() {
		// The hold is out of the registry and not yet ended: a Close now
		// does not find it. Give it time to return, as it did when it did
		// not wait for this end.
		go func() {
			_ = c.Close()
			closed <- time.Now()
		}()
		select {
		case at := <-closed:
			closed <- at
		case <-time.After(300 * time.Millisecond):
		}
	}
	t.Cleanup(func() { c.testHookForced = nil })
	if ok, err := m.ForceUnlock(ctx); err != nil || !ok {
		t.Fatalf("ForceUnlock: %v, %v", ok, err)
	}
	c.testHookForced = nil
	var closedAt time.Time
	select {
	case closedAt = <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return within 5s")
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.at) != 1 {
		t.Fatalf("%d hold ends reported, want 1", len(obs.at))
	}
	if at := obs.at[0]; at.After(closedAt) {
		t.Fatalf("the forced hold's end was reported %s after Close returned", at.Sub(closedAt))
	}
}
