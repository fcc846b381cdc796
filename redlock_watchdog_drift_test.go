package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"
)

// With the watchdog renewing each node, a majority that stops confirming
// renewals ends the lock context within the validity, lease − elapsed −
// drift counted from the last renewals a majority confirmed, also with a
// drift allowance (WithClockDrift) wider than a single hold's loss margin:
// past it, a node whose clock runs that much faster may have let the key
// expire and granted it to another owner.
func TestRedLockWatchdogQuorumLossWithinDrift(t *testing.T) {
	t.Parallel()
	_, cs, pxs := proxiedNodes(t, 3)
	ctx := testCtx(t, 30*time.Second)
	const lease = 2 * time.Second
	const factor = 0.4 // drift 800ms; a node hold's loss margin is 45ms
	r := mustRedLock(t, "job", cs, WithWatchdog(lease, 600*time.Millisecond),
		WithClockDrift(factor, 0), WithNodeTimeout(300*time.Millisecond))
	lctx, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Unlock(lctx)
	pxs[1].Freeze()
	pxs[2].Freeze()
	defer pxs[1].Thaw()
	defer pxs[2].Thaw()
	// The validity is counted from when the last round a majority confirmed
	// was sent, which is before the freeze: the lease less the drift from
	// then bounds it. Counted from before the Lock, a renewal round sent
	// before a freeze that a loaded machine made late read as a validity
	// past its end.
	validUntil := time.Now().Add(lease - r.drift(lease))
	select {
	case <-lctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("lock context alive 5s after two of three nodes stopped answering")
	}
	ended := time.Now()
	// Timers fire late on a loaded machine: 300ms of slack, still far
	// before the nodes' own loss deadlines (~1.95s).
	if late := ended.Sub(validUntil); late > 300*time.Millisecond {
		t.Fatalf("lock context ended %s after its validity (lease %s, drift %s); want it ended by then", late.Round(time.Millisecond), lease, r.drift(lease))
	}
	if !errors.Is(context.Cause(lctx), ErrLockLost) {
		t.Fatalf("cause = %v, want ErrLockLost", context.Cause(lctx))
	}
}

// A drift allowance that leaves less validity than the watchdog's renewal
// interval would end every hold between two renewals: refused when the
// RedLock is made.
func TestRedLockWatchdogEveryBeyondValidity(t *testing.T) {
	t.Parallel()
	_, cs, _ := proxiedNodes(t, 3)
	for _, tc := range []struct {
		opts []RedLockOption
		ok   bool
	}{
		{[]RedLockOption{WithWatchdog(time.Second, 600*time.Millisecond), WithClockDrift(0.5, 0)}, false},
		{[]RedLockOption{WithClockDrift(0.7, 0)}, false}, // 30s lease renewed every 10s
		{[]RedLockOption{WithWatchdog(time.Second, 400*time.Millisecond), WithClockDrift(0.5, 0)}, true},
		{[]RedLockOption{WithLease(time.Second), WithClockDrift(0.5, 0)}, true}, // no watchdog
	} {
		_, err := NewRedLock("job", cs, tc.opts...)
		switch {
		case tc.ok && err != nil:
			t.Errorf("%d options: %v", len(tc.opts), err)
		case !tc.ok && !errors.Is(err, ErrInvalidArgument):
			t.Errorf("renewals past the validity: %v, want ErrInvalidArgument", err)
		}
	}
}

// Renewals a majority confirms keep such a RedLock held well past its first
// validity.
func TestRedLockWatchdogWideDriftRenewed(t *testing.T) {
	t.Parallel()
	_, cs, _ := proxiedNodes(t, 3)
	ctx := testCtx(t, 30*time.Second)
	// A validity (1.8 s) that a loaded machine's renewal rounds, every
	// 200 ms, each bounded by the 600 ms node timeout, keep up with.
	r := mustRedLock(t, "job", cs, WithWatchdog(3*time.Second, 200*time.Millisecond),
		WithClockDrift(0.4, 0), WithNodeTimeout(600*time.Millisecond))
	lctx, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second) // the validity at acquisition was 1.8 s
	if lctx.Err() != nil {
		t.Fatalf("renewed RedLock lost: %v", context.Cause(lctx))
	}
	// The release is not what is checked: one a loaded machine's node did
	// not answer in time is asked again, as Unlock's error says to.
	redUnlock(t, r, lctx, r.HeldOn(lctx))
}
