package scriptlock

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// The failover guard's replica count is taken again on the elapsed time,
// not the wall clock's: the wall clock stepped back a minute after a count
// of one replica, and that replica then left. Every guarded Lock waited for
// it in vain and failed with ErrNotReplicated, and the count, which seemed
// to have been taken in the future, was not taken again until the wall
// clock had caught up.
func TestGuardRecountIgnoresWallClockStep(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	c := newTestClient(t, primary.Client(t), WithFailoverGuard(true, 200*time.Millisecond))
	m := mustMutex(t, c, "guard-step")
	ctx := testCtx(t, 30*time.Second)
	lctx, err := m.TryLock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	if n := c.replicasOf(m.Key()); n != 1 {
		t.Fatalf("replica count %d, want 1", n)
	}
	stepWallClock(t, time.Minute, c)
	replica.Do(t, "REPLICAOF", "NO", "ONE")
	for deadline := time.Now().Add(5 * time.Second); ; {
		info, err := primary.Do(t, "INFO", "replication").ToString()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(info, "connected_slaves:0") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the primary still lists its replica")
		}
		time.Sleep(20 * time.Millisecond)
	}
	var lastErr error
	for deadline := time.Now().Add(8 * time.Second); time.Now().Before(deadline); {
		lctx, err := m.TryLock(ctx, 0)
		if err == nil {
			if err := m.Unlock(lctx); err != nil {
				t.Fatal(err)
			}
			return
		}
		if !errors.Is(err, ErrNotReplicated) {
			t.Fatal(err)
		}
		lastErr = err
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("every Lock failed for 8s after the primary's only replica left (the wall clock stepped back a minute): %v", lastErr)
}
