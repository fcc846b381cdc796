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

// The default node timeout (lease/100 within [10ms, 200ms]) stays below a
// lease too short for its 10ms floor, as an explicit one must: a node
// answering within a timeout at or above the lease may have answered after
// the lease ran out. Leases of 20ms and more keep the documented default.
func TestRedLockDefaultNodeTimeoutBelowLease(t *testing.T) {
	t.Parallel()
	cs := redlockClients(t, redistest.Servers(t, 3))
	for _, tc := range []struct {
		lease, want time.Duration
	}{
		{6 * time.Millisecond, 3 * time.Millisecond},
		{10 * time.Millisecond, 5 * time.Millisecond},
		{15 * time.Millisecond, 7500 * time.Microsecond},
		{20 * time.Millisecond, 10 * time.Millisecond},
		{time.Second, 10 * time.Millisecond},
		{5 * time.Second, 50 * time.Millisecond},
		{time.Minute, 200 * time.Millisecond},
	} {
		r, err := NewRedLock("default-node-timeout", cs, WithLease(tc.lease))
		if err != nil {
			t.Errorf("lease %s: %v", tc.lease, err)
			continue
		}
		if r.nodeTimeout != tc.want || r.nodeTimeout >= tc.lease {
			t.Errorf("lease %s: default node timeout %s, want %s (below the lease)", tc.lease, r.nodeTimeout, tc.want)
		}
	}
}
