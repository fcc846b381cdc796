package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// endingCtx ends itself as the grant of an acquisition under it builds the
// lock context (its last look at ctx): after the acquisition decided
// whether to keep the grant, before it returns.
type endingCtx struct {
	context.Context
	cancel context.CancelFunc
}

func (c *endingCtx) Value(key any) any {
	if _, ok := key.(multiMemberKey); ok {
		c.cancel()
	}
	return c.Context.Value(key)
}

// TestReentryEndedAfterKeptKeepsLease: a re-entry without a lease whose
// context ends once its grant is registered either succeeds (the hold is
// the watchdog's, as a re-entry without a lease makes it) or fails and
// leaves the owner's hold, taken with a lease, to that lease. It failed
// with the context's error and was given back, yet it had handed the hold
// to the watchdog, so the lock and its context outlived the lease until an
// Unlock.
func TestReentryEndedAfterKeptKeepsLease(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), WithWatchdog(time.Second, 200*time.Millisecond))
	const lease = time.Second
	ctx := testCtx(t, 30*time.Second)
	for k, l := range map[string]probeLocker{
		"Mutex":     mustMutex(t, c, "reentry-ended-after-kept-mutex"),
		"FairMutex": mustFair(t, c, "reentry-ended-after-kept-fair"),
		"RWMutex":   mustRW(t, c, "reentry-ended-after-kept-rw-write"),
		"RLocker":   rwRead{mustRW(t, c, "reentry-ended-after-kept-rw-read")},
	} {
		sent := time.Now()
		lctx, err := l.LockWithLease(ctx, lease)
		if err != nil {
			t.Fatal(k, err)
		}
		t.Cleanup(func() { _ = l.Unlock(lctx) })
		rctx, cancel := context.WithCancel(lctx)
		inner, err := l.Lock(&endingCtx{rctx, cancel})
		cancel()
		if err == nil {
			// Kept: the owner holds it twice, the re-entry renewed by the
			// watchdog until its Unlock.
			if err := l.Unlock(inner); err != nil {
				t.Fatalf("%s: Unlock of the re-entry: %v", k, err)
			}
			continue
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: re-entry whose context ended: %v, want context.Canceled", k, err)
		}
		select {
		case <-lctx.Done():
			if cause := context.Cause(lctx); !errors.Is(cause, ErrLockLost) {
				t.Errorf("%s: lock context ended with %v, want ErrLockLost", k, cause)
			}
		case <-time.After(time.Until(lossDeadline(sent, lease).Add(guardLate))):
			t.Errorf("%s: lock context still live %s past the end of its %s lease: the re-entry that failed with its context's end handed the hold to the watchdog", k, guardLate, lease)
		}
	}
}
