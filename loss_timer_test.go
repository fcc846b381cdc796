package scriptlock

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Loss timers are reused across holds: holds that take over the stopped
// timers of earlier holds still end at their own deadline, and a watchdog
// hold that takes one over is not ended at an earlier hold's deadline.
func TestLossTimerReuse(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, redistest.Server(t).Client(t))
	ctx := testCtx(t, 30*time.Second)
	const n = 20
	ms := make([]*Mutex, n)
	held := make([]context.Context, n)
	lockAll := func(lease time.Duration) {
		t.Helper()
		for i := range ms {
			var err error
			if held[i], err = ms[i].LockWithLease(ctx, lease); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range ms {
		ms[i] = mustMutex(t, c, "loss-timer-"+strconv.Itoa(i))
	}
	// n timers armed, stopped and pooled (a lease long enough that a
	// loaded machine's n Locks and Unlocks end within it).
	lockAll(3 * time.Second)
	for i := range ms {
		if err := ms[i].Unlock(held[i]); err != nil {
			t.Fatal(err)
		}
	}
	long, err := mustMutex(t, c, "loss-timer-watchdog").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lockAll(500 * time.Millisecond)
	for i, l := range held {
		select {
		case <-l.Done():
			if !errors.Is(context.Cause(l), ErrLockLost) {
				t.Fatalf("hold %d: cause = %v, want ErrLockLost", i, context.Cause(l))
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("hold %d (on a reused timer) did not end at its deadline", i)
		}
	}
	if long.Err() != nil {
		t.Fatalf("a watchdog hold ended: %v", context.Cause(long))
	}
}
