package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A ForceUnlock mark ended a minute ago is dropped as acquisitions end even
// while another acquisition is always in flight (a wait that never ends):
// only a later ForceUnlock dropped it then, and it stayed for good after
// the last one.
func TestForceMarkDroppedUnderLongWait(t *testing.T) {
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	c := newTestClient(t, node.Client(t), prefix)
	rival := newTestClient(t, node.Client(t), prefix)
	ctx := testCtx(t, 10*time.Second)
	r := mustMutex(t, rival, "held")
	rctx, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Unlock(rctx) }()
	wctx, cancel := context.WithCancel(ctx)
	waited := make(chan struct{})
	go func() {
		defer close(waited)
		_, _ = mustMutex(t, c, "held").Lock(wctx) // in flight throughout
	}()
	defer func() { cancel(); <-waited }()
	if !eventually(3*time.Second, func() bool { return c.inflight.n.Load() > 0 }) {
		t.Fatal("the wait is not in flight")
	}
	c.mu.Lock()
	seq := c.forceSeq.Add(1)
	c.forcing = map[string]forceMark{"k": {n: 0, last: seq, at: monoNanos(time.Now().Add(-2 * time.Minute))}}
	c.forceKept.Store(1)
	c.mu.Unlock()
	m := mustMutex(t, c, "other")
	for range 2 {
		lctx, err := m.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Unlock(lctx); err != nil {
			t.Fatal(err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(c.forcing); n != 0 {
		t.Fatalf("%d ForceUnlock mark kept two minutes after it ended, while a wait is in flight", n)
	}
	if c.forcePruned < seq {
		t.Fatalf("the dropped mark's seq %d is not kept (forcePruned %d)", seq, c.forcePruned)
	}
}
