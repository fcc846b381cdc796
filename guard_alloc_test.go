package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestGuardedNoAlloc: taking the failover guard's wait for a call on a
// primary with replicas, from a count already taken, allocates nothing on a
// client that is not a Cluster client (no redirect can change the number
// its WAIT asks for there).
func TestGuardedNoAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	primary, _ := redistest.Replicated(t)
	c := newTestClient(t, primary.Client(t), WithFailoverGuard(true, time.Second))
	m := mustMutex(t, c, "guard-alloc")
	ctx := context.Background()
	s := m.spec()
	if g := c.guarded(ctx, s.cfg, s.key); !g.on() {
		t.Fatalf("the guard does not wait on a primary with a replica: %+v", g)
	}
	got := testing.AllocsPerRun(200, func() { _ = c.guarded(ctx, s.cfg, s.key) })
	if got != 0 {
		t.Errorf("guarded: %v allocations per call, want 0", got)
	}
}
