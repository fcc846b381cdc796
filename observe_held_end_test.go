package scriptlock

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// sleepyHoldEnd is an Observer whose HoldEnd takes a while, and that keeps the
// durations it was told.
type sleepyHoldEnd struct {
	NopObserver
	mu   sync.Mutex
	held []time.Duration
}

func (s *sleepyHoldEnd) HoldEnd(_ context.Context, _ Op, e HoldEvent) {
	s.mu.Lock()
	s.held = append(s.held, e.Held)
	s.mu.Unlock()
	time.Sleep(300 * time.Millisecond)
}

// HoldEvent.Held runs to the hold's end, not to its report: Close ends every
// hold before it reports any, and the Observer's time on one HoldEnd is not
// added to the next hold's duration.
func TestObserverHeldEndsWithTheHold(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	obs := &sleepyHoldEnd{}
	c := newTestClient(t, node.Client(t), sharedPrefix(t), WithObserver(obs))
	ctx := testCtx(t, 30*time.Second)
	for _, name := range []string{"a", "b", "c"} {
		if _, err := mustMutex(t, c, name).Lock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.held) != 3 {
		t.Fatalf("%d hold ends, want 3", len(obs.held))
	}
	for i, d := range obs.held {
		if d >= 250*time.Millisecond {
			t.Errorf("hold end %d: Held %s, which counts the Observer's HoldEnd calls before it; the holds lasted well under 250ms", i+1, d)
		}
	}
}
