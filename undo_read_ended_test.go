package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An undo gives back read holds this Client does not know of (grants whose
// replies were lost) also when their lease keys have run out while another
// reader (here a Redisson one) keeps the lock: the release of such a hold
// takes it out and latches its outcome, so the undo reads the count again
// under a new latch rather than repeat that release, which would answer
// the latched outcome and change nothing. Otherwise the undo gave up with
// the holds still on the server, and the owner's next undo within the
// latch's life released nothing at all, leaving a live hold there.
func TestUndoGivesBackReadHoldsPastTheirLease(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	rw := mustRW(t, c, "undo-read-ended")
	j := newRedissonJava(node.Client(t), 1)
	if ok, _, err := j.readLock(ctx, rw.Key()); err != nil || !ok {
		t.Fatalf("Java read lock: ok=%v err=%v", ok, err)
	}
	field := c.fieldOf(&rw.read, "lost-grants")
	// Two lost grants of the owner, on the server, whose leases then end.
	for range 2 {
		if a, _, err := rw.read.tryAcquire(ctx, field, 100*time.Millisecond, 0, guardWait{}, waitAttempt{}); err != nil || !a.granted {
			t.Fatalf("read grant on the server: %+v, %v", a, err)
		}
	}
	time.Sleep(300 * time.Millisecond)
	if err := c.undo(ctx, &rw.read, field, 100*time.Millisecond, 0, false); err != nil {
		t.Fatal(err)
	}
	if n, err := node.Do(t, "HEXISTS", rw.Key(), field).AsInt64(); err != nil || n != 0 {
		t.Errorf("the undo of two read holds past their lease left the owner's field: HEXISTS = %d, %v", n, err)
		node.Do(t, "HDEL", rw.Key(), field)
	}
	// A later lost grant of the same owner, still leased.
	if a, _, err := rw.read.tryAcquire(ctx, field, 10*time.Second, 0, guardWait{}, waitAttempt{}); err != nil || !a.granted {
		t.Fatalf("read grant on the server: %+v, %v", a, err)
	}
	if err := c.undo(ctx, &rw.read, field, 10*time.Second, 0, false); err != nil {
		t.Fatal(err)
	}
	if n, err := node.Do(t, "HEXISTS", rw.Key(), field).AsInt64(); err != nil || n != 0 {
		t.Errorf("the owner's next undo left its leased read hold on the server: HEXISTS = %d, %v", n, err)
	}
}
