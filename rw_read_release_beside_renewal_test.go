package scriptlock

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A read hold the watchdog renews, re-entered with a long lease and without
// one; the latter's RUnlock is answered while a renewal is on its way, which
// then runs and sets every read lease key of the owner, the long one too, to
// the watchdog's lease. The release's reply reported the long key as left,
// yet must not move the loss deadline past that renewal's lease: its reply
// is held up, and once that lease has run out and another owner holds the
// write lock, the hold's contexts must have ended.
func TestReadReleaseBesideRenewalLongKey(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	const watchdog = time.Second
	entered, proceed := make(chan struct{}), make(chan struct{})
	var sends, handled atomic.Int32
	c := newTestClient(t, node.Client(t), WithWatchdog(watchdog, 0))
	rw := mustRW(t, c, "release-beside-renewal")
	actx := WithOwner(testCtx(t, 30*time.Second), "A")
	var inner atomic.Value // the re-entry without a lease to release
	// The first renewal: the release is made once it is marked sent, and
	// its reply is held up; no later renewal reaches the server.
	c.wd.sendHook = func() {
		switch sends.Add(1) {
		case 1:
			if err := rw.RUnlock(inner.Load().(context.Context)); err != nil {
				t.Error(err)
			}
		default:
			<-proceed
		}
	}
	c.wd.renewedHook = func() {
		if handled.Add(1) == 1 {
			close(entered)
			<-proceed
		}
	}
	defer close(proceed)
	outer, err := rw.RLock(actx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rw.RLockWithLease(actx, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	in, err := rw.RLock(actx)
	if err != nil {
		t.Fatal(err)
	}
	inner.Store(in)
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal("no renewal")
	}
	time.Sleep(watchdog + 200*time.Millisecond) // the renewal's lease runs out
	// Another reader comes and goes: its release finds none of A's read
	// lease keys left and deletes the lock.
	b, err := rw.RLockWithLease(WithOwner(testCtx(t, 5*time.Second), "B"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := rw.RUnlock(b); err != nil {
		t.Fatal(err)
	}
	w, err := rw.TryLockWithLease(WithOwner(testCtx(t, 5*time.Second), "C"), 0, 5*time.Second)
	if err != nil {
		t.Fatalf("the writer was refused: %v", err)
	}
	defer rw.Unlock(w)
	if context.Cause(outer) == nil {
		t.Error("another owner holds the write lock while the read hold's context lives")
	}
}
