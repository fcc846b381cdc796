package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRWReadUnlockLapsedGivesBackUnknownReads: an RUnlock that finds its read
// hold lapsed (its lease and that of a re-entry whose reply was lost, which
// this Client does not know of, ran out while another reader keeps the
// lock) gives back the unknown hold too, as the owner's last Unlock does
// when it finds more holds than it knew of. Left, the owner's field stayed
// in the lock: State reported a read hold the owner did not have, and its
// write Lock failed with ErrUpgrade ("the owner holds a read lock") rather
// than wait for the other reader.
func TestRWReadUnlockLapsedGivesBackUnknownReads(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	rw := mustRW(t, c, "rw-lapsed-undo")
	ctx := testCtx(t, 30*time.Second)
	other, err := rw.RLockWithLease(WithOwner(ctx, "other"), 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer rw.RUnlock(other)
	const lease = 300 * time.Millisecond
	actx, err := rw.RLockWithLease(WithOwner(ctx, "a"), lease)
	if err != nil {
		t.Fatal(err)
	}
	// The lost re-entry, as the server ran it.
	if at, _, err := rw.read.tryAcquire(ctx, c.fieldOf(&rw.read, "a"), lease, 0, guardWait{}, waitAttempt{}); err != nil || !at.granted {
		t.Fatalf("re-entry on the server: %+v, %v", at, err)
	}
	time.Sleep(3 * lease) // past both leases; the other reader keeps the lock
	if err := rw.RUnlock(actx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("RUnlock of a lapsed read hold: %v; want ErrNotHeld", err)
	}
	if st, err := rw.State(WithOwner(ctx, "a")); err != nil || st.Reads != 0 {
		t.Errorf("the owner after RUnlock of its lapsed read hold: %+v, %v; want no read hold left", st, err)
	}
	if _, err := rw.TryLock(WithOwner(ctx, "a"), 0); !errors.Is(err, ErrNotAcquired) {
		t.Errorf("the owner's write TryLock beside the other reader: %v; want ErrNotAcquired", err)
	}
}
