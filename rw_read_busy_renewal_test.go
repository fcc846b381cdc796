package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A read hold the watchdog renews while goroutines sharing its owner re-enter
// it (with and without a lease) and read-unlock without pause. A read release
// that leaves holds sets the lock's expiry to the longest remaining read
// key's lease, and the watchdog's renewals overlap those calls; the hold must
// last all the same, as its lock on the server does.
func TestWatchdogReadHoldBusyWithReentries(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), WithWatchdog(2*time.Second, 0))
	rw := mustRW(t, c, "busy-read")
	octx := WithOwner(testCtx(t, 30*time.Second), "job-read")
	outer, err := rw.RLock(octx)
	if err != nil {
		t.Fatal(err)
	}
	churnOwner(octx, outer, rw.RLock, rw.RLockWithLease, rw.RUnlock)
	if err := context.Cause(outer); err != nil {
		t.Errorf("the watchdog read hold ended while its owner re-entered it: %v", err)
	}
	_ = rw.RUnlock(outer)
}
