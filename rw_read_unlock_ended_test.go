package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An RUnlock of a read hold whose lease ran out while another reader (here a
// Redisson one) kept the lock alive answers ErrNotHeld, as an Unlock after
// expiry does, and takes the hold's field out of the hash, as a release
// would: it keeps nobody out. The field outlives its lease key in
// Redisson's layout, and the release found it and answered nil, as if the
// hold had lasted until then.
func TestRWReadUnlockAfterLeaseEndedBesideReader(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	rw := mustRW(t, c, "read-ended")
	j := newRedissonJava(node.Client(t), 1)
	if ok, _, err := j.readLock(ctx, rw.Key()); err != nil || !ok {
		t.Fatalf("Java read lock: ok=%v err=%v", ok, err)
	}
	r, err := rw.TryRLockWithLease(ctx, 0, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	<-r.Done()
	// Past the lease on the server too (the context ends a drift allowance
	// before it).
	time.Sleep(200 * time.Millisecond)
	if err := rw.RUnlock(r); !errors.Is(err, ErrNotHeld) {
		t.Errorf("RUnlock of a read hold whose lease ran out: %v; want ErrNotHeld", err)
	}
	fields, err := node.Do(t, "HKEYS", rw.Key()).AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	if len(fields) != 2 {
		t.Errorf("lock fields after the RUnlock: %q; want mode and the Java reader's", fields)
	}
	if n, err := j.readUnlock(ctx, rw.Key()); err != nil || n != 1 {
		t.Fatalf("Java read unlock = %d, %v", n, err)
	}
	w, err := rw.TryLock(ctx, 0)
	if err != nil {
		t.Fatalf("write lock once every reader left: %v", err)
	}
	if err := rw.Unlock(w); err != nil {
		t.Fatal(err)
	}
	// A hold still leased beside it is released as before.
	if ok, _, err := j.readLock(ctx, rw.Key()); err != nil || !ok {
		t.Fatalf("Java read lock: ok=%v err=%v", ok, err)
	}
	r, err = rw.RLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := rw.RUnlock(r); err != nil {
		t.Errorf("RUnlock of a live read hold beside a Java reader: %v", err)
	}
}
