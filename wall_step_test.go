package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"
	"unsafe"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// stepWallClock makes the clock of the Clients cs read what time.Now reads
// once the system's wall clock has been stepped back by d (NTP, an
// operator): the wall reading moves, the monotonic one does not. Restored at
// test end.
func stepWallClock(t *testing.T, d time.Duration, cs ...*Client) {
	f := func() time.Time {
		now := time.Now()
		// time.Time's layout: wall (hasMonotonic bit, 33 bits of seconds
		// since 1885, 30 bits of nanoseconds), ext (the monotonic reading).
		tt := (*struct {
			wall uint64
			ext  int64
			loc  *time.Location
		})(unsafe.Pointer(&now))
		if tt.wall&(1<<63) == 0 {
			panic("time.Now without a monotonic reading")
		}
		tt.wall -= uint64(d/time.Second) << 30
		return now
	}
	if got := f(); time.Since(got.Round(0)) < d-time.Second || time.Until(got) > time.Second {
		t.Fatalf("stepped clock reads %s (wall %s ago)", got, time.Since(got.Round(0)))
	}
	for _, c := range cs {
		c.clockHook.Store(&f)
	}
	t.Cleanup(func() {
		for _, c := range cs {
			c.clockHook.Store(nil)
		}
	})
}

// The wall clock is stepped back while a hold lives: its lock context still
// ends when its lease, less the drift margin, has elapsed since the grant was
// sent. Compared on the wall clock, the loss deadline seemed a minute away
// when its timer fired, and the context lived on past the lease.
func TestLossDeadlineIgnoresWallClockStep(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	m := mustMutex(t, c, "wall-step")
	const lease = 300 * time.Millisecond
	lctx, err := m.LockWithLease(testCtx(t, 10*time.Second), lease)
	if err != nil {
		t.Fatal(err)
	}
	stepWallClock(t, time.Minute, c)
	select {
	case <-lctx.Done():
		if !errors.Is(context.Cause(lctx), ErrLockLost) {
			t.Fatalf("cause %v, want ErrLockLost", context.Cause(lctx))
		}
	case <-time.After(lease + time.Second):
		t.Fatalf("the lock context lives on %s after its %s lease ran out, the wall clock stepped back a minute", time.Second, lease)
	}
}

// The same for a RedLock's validity.
func TestRedLockValidityIgnoresWallClockStep(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	prefix := sharedPrefix(t)
	cs := make([]*Client, len(nodes))
	for i, n := range nodes {
		cs[i] = newTestClient(t, n.Client(t), prefix)
	}
	const lease = 300 * time.Millisecond
	r := mustRedLock(t, "wall-step", cs, WithLease(lease))
	lctx, err := r.Lock(testCtx(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	stepWallClock(t, time.Minute, cs...)
	select {
	case <-lctx.Done():
		if !errors.Is(context.Cause(lctx), ErrLockLost) {
			t.Fatalf("cause %v, want ErrLockLost", context.Cause(lctx))
		}
	case <-time.After(lease + time.Second):
		t.Fatalf("the RedLock context lives on %s after its %s validity ran out, the wall clock stepped back a minute", time.Second, lease)
	}
}
