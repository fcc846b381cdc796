package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A grant whose reply comes back after the hold's loss deadline (a link whose
// round trip is longer than the lease): the lock may already have expired on
// the server, so the context Lock returns must have ended with ErrLockLost. Its
// loss timer fired on a goroutine of its own, and Lock often returned the
// context still alive, past the point where another owner may hold the lock.
func TestGrantPastLossDeadlineEndsContext(t *testing.T) {
	t.Parallel()
	const lease, oneWay = 500 * time.Millisecond, 350 * time.Millisecond
	for _, lc := range lockCases {
		for _, watchdog := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/watchdog=%v", lc.name, watchdog), func(t *testing.T) {
				t.Parallel()
				node := redistest.Server(t)
				for i := range 3 {
					// A Client of its own each time: the give-back of the
					// last one's late grant is still under way on the link.
					px := netproxy.New(t, node.Addr)
					c := newTestClient(t, px.Client(t), WithWatchdog(lease, 150*time.Millisecond))
					warm(t, lc.make(t, c, "warm"))
					px.Delay(oneWay)
					l := lc.make(t, c, fmt.Sprintf("late-%d", i))
					ctx := testCtx(t, 10*time.Second)
					var lctx context.Context
					var err error
					start := time.Now()
					if watchdog {
						lctx, err = l.Lock(ctx)
					} else {
						lctx, err = lc.withLease(l, ctx, lease)
					}
					took := time.Since(start)
					if err != nil {
						t.Fatalf("Lock: %v", err)
					}
					if took < lease {
						t.Fatalf("the grant came back after %v, within the lease: the link is not slow enough", took)
					}
					if lctx.Err() == nil {
						t.Fatalf("attempt %d: Lock returned after %v, past the %v lease, with its context alive", i, took.Round(time.Millisecond), lease)
					}
					if cause := context.Cause(lctx); !errors.Is(cause, ErrLockLost) {
						t.Fatalf("attempt %d: the context ended with %v, not ErrLockLost", i, cause)
					}
				}
			})
		}
	}
}
