package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A node timeout at or above the lease (the explicit one, or the watchdog's
// when there is none) leaves the validity no meaning: a node that answers
// within its timeout may have answered after the lease ran out. NewRedLock
// refuses it.
func TestRedLockNodeTimeoutWithinLease(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	for _, tc := range []struct {
		name string
		opts []RedLockOption
		ok   bool
	}{
		{"equal to the lease", []RedLockOption{WithLease(time.Second), WithNodeTimeout(time.Second)}, false},
		{"above the lease", []RedLockOption{WithLease(time.Second), WithNodeTimeout(2 * time.Second)}, false},
		{"above the watchdog's lease", []RedLockOption{WithWatchdog(time.Second, 300*time.Millisecond), WithNodeTimeout(2 * time.Second)}, false},
		{"above the Clients' watchdog lease", []RedLockOption{WithNodeTimeout(time.Minute)}, false},
		{"below the lease", []RedLockOption{WithLease(time.Second), WithNodeTimeout(500 * time.Millisecond)}, true},
		{"below the watchdog's lease", []RedLockOption{WithNodeTimeout(time.Second)}, true},
	} {
		_, err := NewRedLock("node-timeout", cs, tc.opts...)
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case !tc.ok && !errors.Is(err, ErrInvalidArgument):
			t.Errorf("%s: %v, want ErrInvalidArgument", tc.name, err)
		}
	}
}
