package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRWStateAfterReadLeaseEnded: an owner's read hold taken with a lease and
// left to it (no RUnlock: the lease is the release) while another reader
// keeps the lock. Its field stays in the lock's hash until the lock ends,
// but none of its lease keys is left: State reported the field's count as a
// read hold the owner no longer has.
func TestRWStateAfterReadLeaseEnded(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	c := newTestClient(t, node.Client(t), prefix)
	rw := mustRW(t, c, "rw-state-read-lease-ended")
	orw := mustRW(t, newTestClient(t, node.Client(t), prefix), "rw-state-read-lease-ended")
	ctx := testCtx(t, 30*time.Second)
	other, err := orw.RLockWithLease(WithOwner(ctx, "other"), 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer orw.RUnlock(other)
	const lease = 300 * time.Millisecond
	actx := WithOwner(ctx, "a")
	h, err := rw.RLockWithLease(actx, lease)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := rw.State(actx); err != nil || st.Reads != 1 {
		t.Fatalf("State while the owner reads = %+v, %v; want 1 read", st, err)
	}
	<-h.Done()
	time.Sleep(lease) // past the lease on the server too
	if n, err := node.Do(t, "HGET", rw.key, c.id+":a").ToString(); err != nil || n != "1" {
		t.Fatalf("the owner's field = %q, %v; want 1, kept until the lock ends", n, err)
	}
	st, err := rw.State(actx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Reads != 0 || st.Writes != 0 || st.Mode != "read" || st.Lease <= 0 || st.Lease > 20*time.Second {
		t.Fatalf("State of the owner whose read lease ran out beside another reader = %+v; want 0 reads, 0 writes, mode read, the other reader's lease", st)
	}
	if st, err := orw.State(WithOwner(ctx, "other")); err != nil || st.Reads != 1 {
		t.Fatalf("State of the other reader = %+v, %v; want 1 read", st, err)
	}
}
