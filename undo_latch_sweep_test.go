package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// The latch of an undo's release kept for the owner's next undo is dropped
// once given up on (half the latch's life) as the Client's acquisitions go
// on, not only when another undo draws a latch: one per lock name whose
// cancelled wait was undone stayed for good after the last such undo.
func TestUndoLatchDroppedOnceGivenUp(t *testing.T) {
	c := newTestClient(t, redistest.Server(t).Client(t))
	ctx := testCtx(t, 10*time.Second)
	id := holdID("k", "f")
	c.mu.Lock()
	c.undoLatches = map[holdKey]undoLatch{id: {"redisson_unlock_latch:{k}:x:1", monoNanos(time.Now().Add(-undoLatchTTL))}}
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
	if n := len(c.undoLatches); n != 0 {
		t.Fatalf("%d undo latch kept a minute after it was drawn, past half its life, after the Client's acquisitions", n)
	}
}
