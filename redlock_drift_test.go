package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A clock drift allowance that leaves the lease no validity makes a RedLock
// that could never be held: refused when it is made, before any node is
// written, whether the lease is explicit or the watchdog's.
func TestRedLockDriftBeyondLease(t *testing.T) {
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	for _, opts := range [][]RedLockOption{
		{WithLease(100 * time.Millisecond), WithClockDrift(0.5, 60*time.Millisecond)},
		{WithClockDrift(0.5, time.Minute)}, // against the 30 s watchdog lease
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
