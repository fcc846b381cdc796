package scriptlock

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A hold taken through one handle with a lease and handed to the watchdog by
// a re-entry without one through another handle of the same lock, set up
// with a shorter watchdog lease: the hold keeps the re-entry's watchdog
// lease, and must be renewed at that handle's interval, also when an Extend
// beside the hand-over has the watchdog renew it at once. Renewed at the
// first handle's interval (10 s), the 6 s lease ran out between renewals;
// renewed every 500 ms, it outlasts a loaded machine's late renewals.
func TestWatchdogSoonKeepsHandOverInterval(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	a := mustMutex(t, c, "wd-soon-interval")
	b := mustMutex(t, c, "wd-soon-interval", WithWatchdog(6*time.Second, 500*time.Millisecond))
	warmShared(t, a)
	octx := WithOwner(ctx, "job")
	outer, err := a.LockWithLease(octx, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var once atomic.Bool
	var cerr error
	c.setGrantHook(func() {
		if once.CompareAndSwap(false, true) {
			// The watchdog re-entry ran on the server; the Extend runs
			// after it, and is handled first.
			cerr = a.Extend(octx, outer, 300*time.Millisecond)
		}
	})
	inner, err := b.Lock(octx)
	c.setGrantHook(nil)
	if err != nil || cerr != nil {
		t.Fatalf("watchdog re-entry: %v; Extend beside it: %v", err, cerr)
	}
	time.Sleep(8 * time.Second) // past the 6 s lease, well before a 10 s interval
	if err := context.Cause(outer); err != nil {
		t.Errorf("the hold the watchdog renews ended: %v", err)
	}
	if ttl := pttlOf(t, node, a.Key()); ttl <= 0 {
		t.Errorf("the lock is gone (PTTL %d) while the watchdog renews the hold", ttl)
	}
	_ = b.Unlock(inner)
	_ = a.Unlock(outer)
}
