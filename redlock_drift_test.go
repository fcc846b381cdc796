package scriptlock

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A clock drift allowance that leaves the lease no validity makes a RedLock
// that could never be held: refused when it is made, before any node is
// written, whether the lease is explicit or the watchdog's.
func TestRedLockDriftBeyondLease(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	for _, opts := range [][]RedLockOption{
		{WithLease(100 * time.Millisecond), WithClockDrift(0.5, 60*time.Millisecond)},
		{WithClockDrift(0.5, time.Minute)}, // against the 30 s watchdog lease
		// An extra near the longest Duration: lease × factor + extra
		// overflowed to a negative allowance, which let the RedLock be made.
		{WithLease(10 * time.Second), WithClockDrift(0.5, math.MaxInt64)},
		{WithClockDrift(0.01, math.MaxInt64-time.Millisecond)},
	} {
		r, err := NewRedLock("job", cs, opts...)
		if !errors.Is(err, ErrInvalidArgument) {
			if r != nil {
				_, lerr := r.TryLock(testCtx(t, 5*time.Second), 0)
				t.Errorf("NewRedLock with drift beyond its lease: %v (its TryLock: %v), want ErrInvalidArgument", err, lerr)
			} else {
				t.Errorf("NewRedLock with drift beyond its lease: %v, want ErrInvalidArgument", err)
			}
		}
	}
}

// An Extend every node would refuse as invalid (a lease within the nodes'
// loss margin, though beyond the RedLock's own drift allowance) is
// ErrInvalidArgument and changes nothing: the validity, and with it the lock
// context, stays as it was.
func TestRedLockExtendInvalidForNodes(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	ctx := testCtx(t, 20*time.Second)
	// A lease long enough that a slow Lock on a loaded machine still leaves
	// the context live through the check.
	r := mustRedLock(t, "job", cs, WithLease(10*time.Second), WithNodeTimeout(time.Second))
	lctx, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Unlock(lctx)
	before, _ := lctx.Deadline()
	if err := r.Extend(ctx, lctx, 4*time.Millisecond); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Extend(4ms): %v, want ErrInvalidArgument", err)
	}
	after, _ := lctx.Deadline()
	time.Sleep(50 * time.Millisecond)
	if lctx.Err() != nil || !after.Equal(before) {
		t.Fatalf("after a refused Extend: context %v, deadline moved by %s", context.Cause(lctx), after.Sub(before))
	}
}
