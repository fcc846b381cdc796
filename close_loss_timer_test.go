package scriptlock

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// holdEndGate is an Observer whose HoldEnd, once armed, waits for gate.
// Before it is armed a HoldEnd passes and is counted in early: on a loaded
// machine a short lease can run out before LockWithLease returns, and that
// end is reported by the acquiring call itself, which must not block.
type holdEndGate struct {
	*pairing
	mu      sync.Mutex
	armed   bool
	early   int
	entered chan struct{}
	gate    chan struct{}
	once    sync.Once
}

func (g *holdEndGate) HoldEnd(ctx context.Context, op Op, e HoldEvent) {
	g.mu.Lock()
	armed := g.armed
	if !armed {
		g.early++
	}
	g.mu.Unlock()
	if armed {
		g.once.Do(func() { close(g.entered) })
		<-g.gate
	}
	g.pairing.HoldEnd(ctx, op, e)
}

// arm makes the next HoldEnd wait for gate, unless a hold already ended
// (the caller then takes a new one with a longer lease).
func (g *holdEndGate) arm() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.early > 0 {
		g.early = 0
		return false
	}
	g.armed = true
	return true
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
	// The hold must still be live when LockWithLease returns, so that its
	// loss timer, not the acquisition, ends it: the lease doubles until it is.
	lease := 100 * time.Millisecond
	for ; ; lease *= 2 {
		if lease > 10*time.Second {
			t.Fatal("every hold's lease ran out before LockWithLease returned")
		}
		m := mustMutex(t, c, fmt.Sprintf("close-loss-timer-%d", lease.Milliseconds()))
		if _, err := m.LockWithLease(testCtx(t, 10*time.Second+lease), lease); err != nil {
			t.Fatal(err)
		}
		if o.arm() {
			break
		}
	}
	select {
	case <-o.entered:
	case <-time.After(lease + 5*time.Second):
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
