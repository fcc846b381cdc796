package scriptlock

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// holdEndGate is an Observer whose HoldEnd waits for gate.
type holdEndGate struct {
	*pairing
	entered chan struct{}
	gate    chan struct{}
	once    sync.Once
}

func (g *holdEndGate) HoldEnd(ctx context.Context, op Op, e HoldEvent) {
	g.once.Do(func() { close(g.entered) })
	<-g.gate
	g.pairing.HoldEnd(ctx, op, e)
}

// A hold's loss timer fires and reports its end (HoldEnd) while Close runs:
// Close returns only once that report is done, so that no Observer callback
// runs after Close has returned.
func TestCloseWaitsForLossTimerHoldEnd(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	o := &holdEndGate{pairing: newPairing(), entered: make(chan struct{}), gate: make(chan struct{})}
	c, err := New(node.Client(t), sharedPrefix(t), WithObserver(o))
	if err != nil {
		t.Fatal(err)
	}
	var gateOnce sync.Once
	open := func() { gateOnce.Do(func() { close(o.gate) }) }
	defer open()
	m := mustMutex(t, c, "close-loss-timer")
	if _, err := m.LockWithLease(testCtx(t, 10*time.Second), 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	select {
	case <-o.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the hold's lease ran out and no HoldEnd came")
	}
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		c.Close()
	}()
	select {
	case <-closed:
		t.Fatal("Close returned while the HoldEnd of a hold its loss timer ended was still running")
	case <-time.After(300 * time.Millisecond):
	}
	open()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return once the HoldEnd was done")
	}
}
