package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestReentryEndedKeepsLease: a re-entry without a lease whose context ends
// as its grant comes back is given back and fails with the context's error;
// it leaves the owner's hold, taken with a lease, to that lease. It handed
// the hold to the watchdog all the same, so the lock and its context
// outlived the lease until an Unlock.
func TestReentryEndedKeepsLease(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), WithWatchdog(time.Second, 200*time.Millisecond))
	m := mustMutex(t, c, "reentry-ended-lease")
	const lease = time.Second
	ctx := testCtx(t, 30*time.Second)
	sent := time.Now()
	lctx, err := m.LockWithLease(ctx, lease)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Unlock(lctx) })
	rctx, cancel := context.WithCancel(lctx)
	defer cancel()
	c.setGrantHook(cancel) // the re-entry's context ends as its grant is back
	_, err = m.Lock(rctx)
	c.setGrantHook(nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("re-entry whose context ended: %v, want context.Canceled", err)
	}
	select {
	case <-lctx.Done():
		if cause := context.Cause(lctx); !errors.Is(cause, ErrLockLost) {
			t.Errorf("lock context ended with %v, want ErrLockLost", cause)
		}
	case <-time.After(time.Until(lossDeadline(sent, lease).Add(guardLate))):
		t.Fatalf("lock context still live %s past the end of its %s lease: the re-entry that failed with its context's end handed the hold to the watchdog", guardLate, lease)
	}
}
