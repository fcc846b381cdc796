package scriptlock

import (
	"math"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A release timeout near the longest Duration is accepted, and releases
// work under it: the latch TTL a release computes from its deadline, rounded
// up to whole seconds, wrapped around to a negative TTL, and Redis refused
// the release ("invalid expire time").
func TestHugeReleaseTimeoutUnlock(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, redistest.Server(t).Client(t), WithReleaseTimeout(math.MaxInt64))
	ctx := testCtx(t, 5*time.Second)
	m := mustMutex(t, c, "x")
	outer, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	inner, err := m.Lock(outer)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(inner); err != nil {
		t.Fatalf("Unlock of a re-entered hold: %v", err)
	}
	if err := m.Unlock(outer); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	s := mustSem(t, c, "s")
	if err := s.Release(ctx, 1); err != nil {
		t.Fatalf("Semaphore.Release: %v", err)
	}
}
