package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRWWriteAfterReadLeaseEnded: a read hold taken with a lease and left to
// it (no RUnlock: the lease is the release) while another reader keeps the
// lock. Its field stays in the lock's hash (Redisson's layout keeps it until
// the lock ends), but none of its lease keys is left: the owner holds no
// read lock. Its write Lock failed with ErrUpgrade, as if it still read,
// rather than wait for the other reader.
func TestRWWriteAfterReadLeaseEnded(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	rw := mustRW(t, c, "rw-read-lease-ended")
	ctx := testCtx(t, 30*time.Second)
	other, err := rw.RLockWithLease(WithOwner(ctx, "other"), 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	const lease = 300 * time.Millisecond
	actx, err := rw.RLockWithLease(WithOwner(ctx, "a"), lease)
	if err != nil {
		t.Fatal(err)
	}
	<-actx.Done()
	time.Sleep(lease) // past the lease on the server too
	if _, err := rw.TryLock(WithOwner(ctx, "a"), 0); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("write TryLock of the owner whose read lease ended, beside another reader: %v; want ErrNotAcquired", err)
	}
	// Its write Lock waits for the other reader, and gets the lock once
	// that one leaves.
	got := make(chan error, 1)
	go func() {
		w, err := rw.TryLock(WithOwner(ctx, "a"), 10*time.Second)
		if err == nil {
			err = rw.Unlock(w)
		}
		got <- err
	}()
	time.Sleep(200 * time.Millisecond)
	if err := rw.RUnlock(other); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("write TryLock of the owner once the other reader left: %v", err)
	}
}
