package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestGuardRenewalRetryBeforeLoss: a guarded watchdog renewal no replica
// acknowledged (the replica stopped for that one renewal) is made again
// before the hold's loss deadline, not a quarter interval later past it,
// when the renewal interval is close to the lease: the next renewal, which
// the replica acknowledges, keeps the hold.
func TestGuardRenewalRetryBeforeLoss(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	// The first renewal's reply comes a guard timeout after it is sent,
	// some 900 ms before the loss deadline: a quarter of the interval
	// (capped at 1 s) falls past it.
	const lease, every, guardTimeout = 9 * time.Second, 7600 * time.Millisecond, 300 * time.Millisecond
	c := newTestClient(t, primary.Client(t), WithFailoverGuard(true, guardTimeout), WithWatchdog(lease, every))
	rounds := 0
	c.wd.sendHook = func() {
		rounds++
		switch rounds {
		case 1:
			replica.Pause()
		case 2:
			replica.Resume()
		}
	}
	t.Cleanup(replica.Resume)
	ctx := testCtx(t, 30*time.Second)
	m := mustMutex(t, c, "guard-renew-retry")
	lctx, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	locked := time.Now()
	// Past the loss deadline had no renewal after the first been acknowledged.
	time.Sleep(time.Until(locked.Add(lease + 500*time.Millisecond)))
	if err := context.Cause(lctx); err != nil {
		t.Fatalf("hold lost after one renewal went unacknowledged, its replica back at once: %v", err)
	}
	if err := m.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
}
