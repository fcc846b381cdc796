package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An RWMutex read hold taken with a 1 s lease and re-entered with a 10 s
// one: the lock lives as long as the longest read lease. An undo then gives
// back a third read hold this Client does not know of (a re-entry whose
// reply was lost). The read holds it keeps still hold the lock for 10 s on
// the server, so the owner's lock context must live on past the first 1 s.
func TestUndoKeepsLongerReadLease(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	rw := mustRW(t, c, "undo-read-lease")
	ctx := testCtx(t, 30*time.Second)
	outer, err := rw.RLockWithLease(ctx, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	inner, err := rw.RLockWithLease(outer, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer rw.RUnlock(inner)
	field := c.fieldOf(&rw.read, ownerIn(outer))
	// The lost re-entry, as the server ran it.
	if a, _, err := rw.read.tryAcquire(ctx, field, 10*time.Second, 0, guardWait{}, waitAttempt{}); err != nil || !a.granted {
		t.Fatalf("re-entry on the server: %+v, %v", a, err)
	}
	if err := c.undo(ctx, &rw.read, field, 10*time.Second, 0, false); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // past the first read hold's lease
	if err := context.Cause(outer); err != nil {
		t.Fatalf("the owner's read hold was ended while the server held its 10 s read lease: %v", err)
	}
	if !exists(t, node, rw.key) {
		t.Fatal("the lock ended on the server with the 10 s read hold still kept")
	}
}
