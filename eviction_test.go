package scriptlock

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestEvictionPolicyWarning: a server that may evict keys at its maxmemory
// can take a held lock; the Client says so in its log, once per policy.
func TestEvictionPolicyWarning(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		maxmemory, policy string
		warn              bool
	}{
		{"100mb", "allkeys-lru", true},
		{"100mb", "volatile-ttl", true},
		{"100mb", "noeviction", false},
		{"0", "allkeys-lru", false}, // no limit: nothing is evicted
	} {
		for _, guard := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/%s/guard=%v", tc.maxmemory, tc.policy, guard), func(t *testing.T) {
				n := redistest.Server(t, redistest.WithArgs("--maxmemory", tc.maxmemory, "--maxmemory-policy", tc.policy))
				var logs syncBuffer
				c := newTestClient(t, n.Client(t), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), WithFailoverGuard(guard, time.Second))
				ctx := testCtx(t, 10*time.Second)
				m := mustMutex(t, c, "evict")
				for range 2 {
					l, err := m.Lock(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if err := m.Unlock(l); err != nil {
						t.Fatal(err)
					}
				}
				if !guard {
					// Checked in the background: wait for it, then once more
					// for a second warning, which must not come.
					eventually(3*time.Second, func() bool { return c.guard.evictionChecks.Load() != 0 })
					time.Sleep(100 * time.Millisecond)
				}
				if tc.warn {
					// Written by the Client's reporter, just after the count.
					eventually(3*time.Second, func() bool { return strings.Contains(logs.String(), "maxmemory_policy="+tc.policy) })
				}
				// Close writes what the reporter holds: a second warning, or
				// one that must not come, is in the log by then.
				c.Close()
				warnings := strings.Count(logs.String(), "maxmemory_policy="+tc.policy)
				switch {
				case tc.warn && warnings != 1:
					t.Errorf("%d warnings of maxmemory-policy %s, want 1; log:\n%s", warnings, tc.policy, logs.String())
				case !tc.warn && strings.Contains(logs.String(), "maxmemory"):
					t.Errorf("warned of maxmemory %s, policy %s:\n%s", tc.maxmemory, tc.policy, logs.String())
				}
			})
		}
	}
}
