package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestSemaphoreDrainArrivingLateDrainsNothing: a DrainPermits held up on its
// way to Redis (a stalled link) fails at its caller's deadline, and permits
// released after that are available to others. The drain then reaching
// Redis took them, returned to nobody: lost to the semaphore for good. It
// must drain nothing, whether held up before its record was reserved or
// after.
func TestSemaphoreDrainArrivingLateDrainsNothing(t *testing.T) {
	const name = "late-drain"
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
			if _, err := mustSem(t, other, name).TrySetPermits(ctx, 3); err != nil {
				t.Fatal(err)
			}
			// Scripts loaded, connection open; the count is 0 now.
			if n, err := mustSem(t, c, name).DrainPermits(ctx); err != nil || n != 3 {
				t.Fatalf("DrainPermits = %d, %v; want 3, <nil>", n, err)
			}
			if afterReserve {
				c.testReserved = px.Freeze
			} else {
				px.Freeze()
			}
			defer px.Thaw()
			const wait = time.Second
			dctx, cancel := context.WithTimeout(ctx, wait)
			start := time.Now()
			_, err := mustSem(t, c, name).DrainPermits(dctx)
			cancel()
			c.testReserved = nil
			if err == nil {
				t.Fatal("the drain succeeded through a frozen link")
			}
			if d := time.Since(start); d > wait+time.Second {
				t.Fatalf("the drain took %v, past its deadline of %v", d, wait)
			}
			if err := mustSem(t, other, name).Release(ctx, 5); err != nil {
				t.Fatalf("releasing permits: %v", err)
			}
			time.Sleep(time.Until(start.Add(wait + 300*time.Millisecond)))
			px.Thaw()
			time.Sleep(300 * time.Millisecond)
			if err := c.rc.Do(ctx, c.rc.B().Ping().Build()).Error(); err != nil {
				t.Fatalf("PING after the thaw: %v", err)
			}
			n, err := mustSem(t, other, name).AvailablePermits(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n != 5 {
				t.Fatalf("%d permits available, want 5: a drain that failed at its deadline reached Redis later and took the permits released after it", n)
			}
		})
	}
}
