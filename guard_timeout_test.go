package scriptlock

import (
	"math"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A failover guard timeout near the longest Duration is accepted, and a wait
// still cuts its attempts off after it: waitOverrun plus the guard timeout
// wrapped around to a deadline in the past, so every TryLock with a wait
// reported a free lock as held by another owner.
func TestHugeGuardTimeoutTryLock(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, redistest.Server(t).Client(t), WithFailoverGuard(true, math.MaxInt64))
	ctx := testCtx(t, 5*time.Second)
	m := mustMutex(t, c, "x")
	lctx, err := m.TryLock(ctx, time.Second)
	if err != nil {
		t.Fatalf("TryLock of a free lock: %v", err)
	}
	if err := m.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	ml := mustMulti(t, []Locker{m, mustMutex(t, c, "y")})
	lctx, err = ml.TryLock(ctx, time.Second)
	if err != nil {
		t.Fatalf("MultiLock TryLock of free locks: %v", err)
	}
	if err := ml.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
}
