package scriptlock

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestEvictionWarningMixedPolicies: on a Cluster whose primaries have
// different eviction policies, each policy is warned of once, as the docs
// say, not again at every replica count (each count reads every primary, and
// the warning was kept for the last policy only, so the two took turns and
// the log had two WARNs per count for as long as the Client ran).
func TestEvictionWarningMixedPolicies(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3)
	ps := cl.Primaries(t)
	for i, policy := range []string{"allkeys-lru", "volatile-ttl"} {
		ps[i].Do(t, "CONFIG", "SET", "maxmemory", "100mb")
		ps[i].Do(t, "CONFIG", "SET", "maxmemory-policy", policy)
	}
	var logs syncBuffer
	c := newTestClient(t, cl.Client(t), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	ctx := testCtx(t, 10*time.Second)
	for range 3 {
		if _, _, _, ok := c.countReplicas(ctx); !ok {
			t.Fatal("replica count failed")
		}
	}
	c.Close() // writes what the reporter holds
	for _, policy := range []string{"allkeys-lru", "volatile-ttl"} {
		if n := strings.Count(logs.String(), "maxmemory_policy="+policy); n != 1 {
			t.Errorf("%d warnings of maxmemory-policy %s after 3 counts, want 1; log:\n%s", n, policy, logs.String())
		}
	}
}
