package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A re-entry without a lease of an RWMutex hold taken with one is renewed
// by the watchdog from then on, as a Mutex's is: the lock outlives the
// explicit lease while the nested hold lasts. An RWMutex re-entry only
// lengthens the lock, so it set no earlier loss deadline, and the loss timer
// that was to hand the hold to the watchdog fired only at the explicit
// lease's end: no renewal had been sent, and the lock was lost under both
// contexts.
func TestRWMutexWatchdogReentryOfLeasedHold(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), WithWatchdog(2*time.Second, 0))
	ctx := testCtx(t, 20*time.Second)
	for _, tc := range []struct {
		side   string
		leased func(*RWMutex) (context.Context, error)
		nested func(*RWMutex, context.Context) (context.Context, error)
		unlock func(*RWMutex, context.Context) error
	}{
		{"read", func(rw *RWMutex) (context.Context, error) { return rw.RLockWithLease(ctx, 2500*time.Millisecond) },
			(*RWMutex).RLock, (*RWMutex).RUnlock},
		{"write", func(rw *RWMutex) (context.Context, error) { return rw.LockWithLease(ctx, 2500*time.Millisecond) },
			(*RWMutex).Lock, (*RWMutex).Unlock},
	} {
		rw := mustRW(t, c, "reentry-"+tc.side)
		outer, err := tc.leased(rw)
		if err != nil {
			t.Fatal(err)
		}
		inner, err := tc.nested(rw, outer)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Second) // twice the explicit lease
		if err := context.Cause(inner); err != nil {
			t.Errorf("%s: the nested watchdog hold ended: %v", tc.side, err)
		}
		if ttl, _ := node.Do(t, "PTTL", rw.Key()).AsInt64(); ttl <= 0 {
			t.Errorf("%s: the lock is gone (PTTL %d) while a watchdog hold of it lasts", tc.side, ttl)
		}
		if err := tc.unlock(rw, inner); err != nil {
			t.Errorf("%s: nested unlock: %v", tc.side, err)
		}
		_ = tc.unlock(rw, outer)
	}
}
