package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestGuardPerShardEndpoints: however the nodes name their preferred
// endpoint in CLUSTER SLOTS (a hostname, or none: a client then uses the
// address it asked), each primary's count is found for its slots, as the
// Client's slot map names it. A primary taken for an uncounted one counts a
// replica: on a shard without one, every Lock would wait for a replica that
// does not exist and fail with ErrNotReplicated.
func TestGuardPerShardEndpoints(t *testing.T) {
	t.Parallel()
	for name, args := range map[string][]string{
		"hostname": {"--cluster-announce-hostname", "localhost", "--cluster-preferred-endpoint-type", "hostname"},
		"unknown":  {"--cluster-preferred-endpoint-type", "unknown-endpoint"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cl := redistest.Cluster(t, 3, redistest.WithClusterReplicas(1), redistest.WithArgs(args...))
			bare := cl.Primaries(t)[0]
			replicaOf(t, cl, bare).Kill()
			for n := "1"; n != "0"; time.Sleep(5 * time.Millisecond) {
				info, _ := bare.Do(t, "INFO", "replication").ToString()
				n = infoField(info, "connected_slaves")
			}
			c := newTestClient(t, cl.Client(t), WithFailoverGuard(true, 200*time.Millisecond))
			ctx := testCtx(t, 30*time.Second)
			onBare := mutexOn(t, cl, c, bare, "guard-endpoint-bare")
			l, err := onBare.TryLock(ctx, 0)
			if errors.Is(err, ErrNotReplicated) {
				t.Fatalf("Lock on the shard without a replica (preferred endpoint: %s): %v", name, err)
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := onBare.Unlock(l); err != nil {
				t.Fatal(err)
			}
		})
	}
}
