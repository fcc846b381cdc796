package scriptlock

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// slowErrCtx, once armed, sleeps in its first Err call: acquire asks it after
// a grant is registered, just before it returns.
type slowErrCtx struct {
	context.Context
	armed atomic.Bool
	sleep time.Duration
}

func (s *slowErrCtx) Err() error {
	if s.armed.CompareAndSwap(true, false) {
		time.Sleep(s.sleep)
	}
	return s.Context.Err()
}

// heldTimes keeps every HoldEvent.
type heldTimes struct {
	NopObserver
	mu   sync.Mutex
	ends []HoldEvent
}

func (h *heldTimes) HoldEnd(_ context.Context, _ Op, e HoldEvent) {
	h.mu.Lock()
	h.ends = append(h.ends, e)
	h.mu.Unlock()
}

// A hold that ends before the acquisition that took it has attached its
// Observer (its lease ran out as Lock was returning) measures Held to its
// end, not to the moment its end is reported.
func TestObserverHeldOfHoldEndedBeforeAttach(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	obs := &heldTimes{}
	c := newTestClient(t, node.Client(t), sharedPrefix(t), WithObserver(obs))
	m := mustMutex(t, c, "ended-early")
	warm(t, m)
	obs.mu.Lock()
	obs.ends = nil // warm's hold
	obs.mu.Unlock()
	ctx := &slowErrCtx{Context: testCtx(t, 30*time.Second), sleep: 400 * time.Millisecond}
	c.setGrantHook(func() { ctx.armed.Store(true) })
	defer func() { c.setGrantHook(nil) }()
	const lease = 50 * time.Millisecond
	lctx, err := m.LockWithLease(ctx, lease)
	c.setGrantHook(nil)
	if err != nil {
		t.Fatal(err)
	}
	if lctx.Err() == nil {
		t.Fatal("the hold did not end while Lock was returning; the test did not hold it back")
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.ends) != 1 {
		t.Fatalf("%d hold ends, want 1", len(obs.ends))
	}
	if e := obs.ends[0]; e.Cause != EndExpired || e.Held >= 250*time.Millisecond {
		t.Errorf("hold end %v, Held %s: want expired, Held about the %s lease (it was reported 400ms later)", e.Cause, e.Held, lease)
	}
}
