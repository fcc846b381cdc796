package scriptlock

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Two read releases of a hold the watchdog renews, by goroutines sharing its
// owner, each leaving holds: the first is sent, the second is sent after it,
// runs on the server first and is answered while the first is on its way.
// The second leaves the owner's longest read lease key, which the first
// deletes when it runs; so the second's reply must not move the end of the
// owner's lock contexts past the keys the first leaves.
func TestReadReleasesBesideRenewalsOverlap(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := node.Client(t)
	const watchdog, long = 3 * time.Second, 30 * time.Second
	c := newTestClient(t, rc, WithWatchdog(watchdog, 0))
	rw := mustRW(t, c, "keeps-overlap")
	octx := WithOwner(testCtx(t, 30*time.Second), "job")
	outer, err := rw.RLock(octx)
	if err != nil {
		t.Fatal(err)
	}
	h := outer.Value(lockCtxKey{}).(*lockCtx).hold
	// Keys 2 (long) and 3 (the watchdog's); key 1 is the outer hold's.
	r2, err := rw.RLockWithLease(octx, long)
	if err != nil {
		t.Fatal(err)
	}
	r3, err := rw.RLock(octx)
	if err != nil {
		t.Fatal(err)
	}
	var marks atomic.Int32
	var second error
	var over atomic.Int64 // how far the loss deadline was past the first key's expiry
	c.setLeaseMarkHook(func() {
		if marks.Add(1) != 1 {
			return
		}
		// The first release is sent (it deletes key 3 when it runs, or
		// key 2 after the second one ran). The second runs first.
		second = rw.RUnlock(r3)
		// The first may run any moment now and leave key 1 alone.
		pttl, err := rc.Do(context.Background(), rc.B().Pttl().Key(rwTimeouts(rw.Key(), h.field)+":1").Build()).AsInt64()
		if err != nil {
			t.Error(err)
			return
		}
		left := time.Until(monoTime(h.lossAt.Load()))
		over.Store(int64(left - time.Duration(pttl)*time.Millisecond))
	})
	defer func() { c.setLeaseMarkHook(nil) }()
	err = rw.RUnlock(r2)
	c.setLeaseMarkHook(nil)
	if err != nil || second != nil {
		t.Fatal(err, second)
	}
	if d := time.Duration(over.Load()); d > 100*time.Millisecond {
		t.Errorf("the owner's lock contexts were to end %v after its read lease keys expire on the server", d)
	}
	if err := context.Cause(outer); err != nil {
		t.Errorf("the read hold ended: %v", err)
	}
	_ = rw.RUnlock(outer)
}
