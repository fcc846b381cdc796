package scriptlock

import (
	"log/slog"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestCountWarningNotHoldingUpLock: the failover guard's replica count
// warns of an eviction policy that can take a held lock, or of a server that
// refuses it INFO; with a logger that blocks, the count waited on the
// warning's write and never ended, and the first acquisition, which waits
// for the count, waited until its context ended (for ever without a
// deadline), the server answering at once. Nor was the count ever taken
// again. The warning is now written off the count's path.
func TestCountWarningNotHoldingUpLock(t *testing.T) {
	t.Parallel()
	for name, setup := range map[string]func(t *testing.T, n *redistest.Node){
		"eviction policy": func(t *testing.T, n *redistest.Node) {
			n.Do(t, "CONFIG", "SET", "maxmemory", "100mb")
			n.Do(t, "CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
		},
		"INFO refused": func(t *testing.T, n *redistest.Node) {
			if err := n.Do(t, "ACL", "SETUSER", "default", "-info").Error(); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			node := redistest.Server(t)
			setup(t, node)
			sink := stuckLog{release: make(chan struct{})}
			c := newTestClient(t, node.Client(t), WithLogger(slog.New(sink)))
			t.Cleanup(func() { close(sink.release) }) // before the Client closes
			ctx := testCtx(t, 5*time.Second)
			m := mustMutex(t, c, "count-warn")
			start := time.Now()
			lctx, err := m.Lock(ctx)
			if err != nil {
				t.Fatalf("Lock failed after %v with the logger's write of the count's warning stuck: %v", time.Since(start).Round(time.Millisecond), err)
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("Lock took %v with the logger's write of the count's warning stuck", took)
			}
			if err := m.Unlock(lctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
