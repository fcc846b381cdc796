package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRWWriteLeaseEndsBesideNestedRead: a write hold with an explicit lease
// whose owner takes a nested read hold (a watchdog lease) that outlives the
// write lease. The read acquisition raised the lock's expiry to the read
// lease, and with no call of the write hold's own setting its expiry, its
// lease's end was left to the server: the lock stayed in write mode while
// the read hold lived, and after the read release for the rest of the
// expiry the read had set, so other readers and writers waited for a write
// hold that had ended. The write hold is given back as its lease ends: the
// lock drops to the owner's read hold.
func TestRWWriteLeaseEndsBesideNestedRead(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	p := sharedPrefix(t)
	// A 6 s watchdog lease stands for the default 30 s.
	c := newTestClient(t, node.Client(t), p, WithWatchdog(6*time.Second, 2*time.Second))
	c2 := newTestClient(t, node.Client(t), p)
	ctx := testCtx(t, 30*time.Second)
	rw, other := mustRW(t, c, "rw-read-beside"), mustRW(t, c2, "rw-read-beside")
	const lease = 300 * time.Millisecond
	wctx, err := rw.TryLockWithLease(ctx, 0, lease)
	if err != nil {
		t.Fatal(err)
	}
	// The owner's read hold, its context not one the write lease ends.
	rctx, err := rw.RLock(WithOwner(ctx, ownerIn(wctx)))
	if err != nil {
		t.Fatal(err)
	}
	<-wctx.Done()
	if !errors.Is(context.Cause(wctx), ErrLockLost) {
		t.Fatalf("write context ended with %v, want its lease's end", context.Cause(wctx))
	}
	start := time.Now()
	r2, err := other.TryRLock(ctx, 2*time.Second)
	if err != nil {
		st, _ := other.State(ctx)
		t.Fatalf("another reader still shut out %s after the %s write lease ended (mode %q, %s left): %v",
			time.Since(start).Round(time.Millisecond), lease, st.Mode, st.Lease, err)
	}
	if rctx.Err() != nil {
		t.Fatalf("the owner's read hold ended with its write lease: %v", context.Cause(rctx))
	}
	if err := other.RUnlock(r2); err != nil {
		t.Fatal(err)
	}
	if err := rw.RUnlock(rctx); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	w2, err := other.TryLock(ctx, 2*time.Second)
	if err != nil {
		t.Fatalf("another writer still shut out %s after the write lease ended and the read hold was released: %v",
			time.Since(start).Round(time.Millisecond), err)
	}
	if err := other.Unlock(w2); err != nil {
		t.Fatal(err)
	}
}
