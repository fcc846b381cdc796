package scriptlock

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// sleepyHoldEnd is an Observer whose HoldEnd takes a while, and that keeps the
// durations it was told, by name, and when it was first called.
type sleepyHoldEnd struct {
	NopObserver
	mu    sync.Mutex
	first time.Time
	held  map[string]time.Duration
}

func (s *sleepyHoldEnd) HoldEnd(_ context.Context, op Op, e HoldEvent) {
	s.mu.Lock()
	if s.first.IsZero() {
		s.first = time.Now()
	}
	s.held[op.Name] = e.Held
	s.mu.Unlock()
	time.Sleep(300 * time.Millisecond)
}

// HoldEvent.Held runs to the hold's end, not to its report: Close ends every
// hold before it reports any, and the Observer's time on one HoldEnd is not
// added to the next hold's duration.
func TestObserverHeldEndsWithTheHold(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	obs := &sleepyHoldEnd{held: map[string]time.Duration{}}
	c := newTestClient(t, node.Client(t), sharedPrefix(t), WithObserver(obs))
	ctx := testCtx(t, 30*time.Second)
	names := []string{"a", "b", "c"}
	started := map[string]time.Time{}
	for _, name := range names {
		started[name] = time.Now()
		if _, err := mustMutex(t, c, name).Lock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.held) != 3 {
		t.Fatalf("hold ends %v, want one for each of %v", obs.held, names)
	}
	// Each hold began after its Lock was called and ended before the first
	// HoldEnd call, however slowly this machine ran: a duration counting a
	// 300 ms HoldEnd call before its own report goes past that.
	for _, name := range names {
		d, ok := obs.held[name]
		if !ok {
			t.Fatalf("no hold end for %q among %v", name, obs.held)
		}
		if bound := obs.first.Sub(started[name]); d > bound {
			t.Errorf("hold %q: Held %s, more than the %s from its Lock call to the first HoldEnd call: it counts the Observer's HoldEnd calls before it", name, d, bound)
		}
	}
}
