package scriptlock

import (
	"fmt"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A Lock whose attempt shares its connection with another call that has a
// shorter deadline (here the give-back of a hold lost as it was granted,
// bounded by that hold's lease) on a slow link: rueidis fails every call on
// the connection with context.DeadlineExceeded when that call's deadline
// breaks it. The attempt's outcome is unknown, as on any broken connection,
// and the wait goes on; Lock failed with "context deadline exceeded" while
// its own context had seconds left.
func TestLockBesideForeignDeadline(t *testing.T) {
	t.Parallel()
	const lease, oneWay = 500 * time.Millisecond, 350 * time.Millisecond
	for _, lc := range lockCases {
		t.Run(lc.name, func(t *testing.T) {
			t.Parallel()
			node := redistest.Server(t)
			px := netproxy.New(t, node.Addr)
			c := newTestClient(t, px.Client(t), WithWatchdog(lease, 150*time.Millisecond))
			warm(t, lc.make(t, c, "warm"))
			px.Delay(oneWay)
			// Granted after its loss deadline: given back in the background,
			// within the lease.
			if _, err := lc.make(t, c, "late").Lock(testCtx(t, 10*time.Second)); err != nil {
				t.Fatalf("Lock: %v", err)
			}
			for i := range 2 {
				ctx := testCtx(t, 20*time.Second)
				start := time.Now()
				if _, err := lc.make(t, c, fmt.Sprintf("next-%d", i)).Lock(ctx); err != nil && ctx.Err() == nil {
					t.Fatalf("Lock %d failed after %v of its 20 s context: %v", i, time.Since(start).Round(time.Millisecond), err)
				}
			}
		})
	}
}
