package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A background undo that waits for an acquisition of the owner in flight
// (awaitAcquiring, not counted itself) leaves no entry behind in the
// Client's count of acquisitions once that acquisition ends: an entry per
// lock name and owner, kept for good, grew with every name a cancelled
// wait was undone on.
func TestAwaitAcquiringLeavesNoEntry(t *testing.T) {
	c := newTestClient(t, redistest.Server(t).Client(t))
	ctx := testCtx(t, 10*time.Second)
	id := holdID("k", "f")
	done, err := c.sharedAcquire(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		done()
	}()
	c.awaitAcquiring(ctx, id, false)
	c.mu.Lock()
	defer c.mu.Unlock()
	if n, ok := c.acquiring[id]; ok || len(c.acquiring) != 0 {
		t.Fatalf("acquiring keeps %d entries after the owner's last acquisition ended (the owner's: %d, %v)", len(c.acquiring), n, ok)
	}
}
