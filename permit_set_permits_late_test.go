package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestPermitSetPermitsArrivingLateSetsNothing: a SetPermits held up on its
// way to Redis (a stalled link) fails at its caller's deadline, and another
// caller sets the total since. The held-up call then reaching Redis set the
// total back to its own, undoing the later change. It must set nothing,
// whether held up before its record was reserved or after.
func TestPermitSetPermitsArrivingLateSetsNothing(t *testing.T) {
	const name = "late-set"
	for _, afterReserve := range []bool{false, true} {
		sub := "held-before-sending"
		if afterReserve {
			sub = "held-after-reserving"
		}
		t.Run(sub, func(t *testing.T) {
			node := redistest.Server(t)
			px := netproxy.New(t, node.Addr)
			c := newTestClient(t, px.Client(t))
			other := newTestClient(t, node.Client(t), WithKeyPrefix(c.cfg.prefix))
			ctx := testCtx(t, 20*time.Second)
			// Scripts loaded, connection open.
			if err := mustPermits(t, c, name).SetPermits(ctx, 2); err != nil {
				t.Fatal(err)
			}
			if afterReserve {
				c.testReserved = px.Freeze
			} else {
				px.Freeze()
			}
			defer px.Thaw()
			const wait = time.Second
			sctx, cancel := context.WithTimeout(ctx, wait)
			start := time.Now()
			err := mustPermits(t, c, name).SetPermits(sctx, 3)
			cancel()
			c.testReserved = nil
			if err == nil {
				t.Fatal("SetPermits succeeded through a frozen link")
			}
			if d := time.Since(start); d > wait+time.Second {
				t.Fatalf("SetPermits took %v, past its deadline of %v", d, wait)
			}
			if err := mustPermits(t, other, name).SetPermits(ctx, 7); err != nil {
				t.Fatalf("setting the permits again: %v", err)
			}
			time.Sleep(time.Until(start.Add(wait + 300*time.Millisecond)))
			px.Thaw()
			time.Sleep(300 * time.Millisecond)
			if err := c.rc.Do(ctx, c.rc.B().Ping().Build()).Error(); err != nil {
				t.Fatalf("PING after the thaw: %v", err)
			}
			n, err := mustPermits(t, other, name).AvailablePermits(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n != 7 {
				t.Fatalf("%d permits available, want 7: a SetPermits that failed at its deadline reached Redis later and undid the total set after it", n)
			}
		})
	}
}
