package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRecordedDeletionReservationHeldUpDeletesNothingLate: a reservation
// held up on its way is made for as long as the caller still waited when it
// was sent, so it lasts past the caller's deadline by as long as it was held
// up. A deletion held up in turn and reaching Redis after the deadline, but
// within that overshoot, deleted what was made after the caller gave up.
func TestRecordedDeletionReservationHeldUpDeletesNothingLate(t *testing.T) {
	const name = "late-reserve"
	kinds := []struct {
		name   string
		del    func(ctx context.Context, c *Client) error
		take   func(ctx context.Context, c *Client) error
		intact func(ctx context.Context, c *Client) (bool, error)
	}{
		{"Mutex",
			func(ctx context.Context, c *Client) error {
				_, err := mustMutex(t, c, name).ForceUnlock(ctx)
				return err
			},
			func(ctx context.Context, c *Client) error { _, err := mustMutex(t, c, name).Lock(ctx); return err },
			func(ctx context.Context, c *Client) (bool, error) { return mustMutex(t, c, name).IsLocked(ctx) }},
		{"Semaphore",
			func(ctx context.Context, c *Client) error { _, err := mustSem(t, c, name).Delete(ctx); return err },
			func(ctx context.Context, c *Client) error {
				_, err := mustSem(t, c, name).TrySetPermits(ctx, 5)
				return err
			},
			func(ctx context.Context, c *Client) (bool, error) {
				n, err := mustSem(t, c, name).AvailablePermits(ctx)
				return n == 5, err
			}},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			node := redistest.Server(t)
			px := netproxy.New(t, node.Addr)
			c := newTestClient(t, px.Client(t))
			other := newTestClient(t, node.Client(t), WithKeyPrefix(c.cfg.prefix))
			ctx := testCtx(t, 20*time.Second)
			// Scripts loaded, connection open.
			if err := k.del(ctx, c); err != nil {
				t.Fatal(err)
			}
			const wait = time.Second
			// The reservation is held up for 600 ms, the deletion after it
			// until well past the caller's deadline.
			px.Freeze()
			defer px.Thaw()
			c.testReserved = px.Freeze
			start := time.Now()
			thaw := time.AfterFunc(600*time.Millisecond, px.Thaw)
			defer thaw.Stop()
			dctx, cancel := context.WithTimeout(ctx, wait)
			err := k.del(dctx, c)
			cancel()
			c.testReserved = nil
			if err == nil {
				t.Fatal("the deletion succeeded through a frozen link")
			}
			if err := k.take(ctx, other); err != nil {
				t.Fatalf("taking the name again: %v", err)
			}
			// Past the caller's deadline, within the reservation's overshoot.
			time.Sleep(time.Until(start.Add(wait + 250*time.Millisecond)))
			px.Thaw()
			time.Sleep(300 * time.Millisecond)
			if err := c.rc.Do(ctx, c.rc.B().Ping().Build()).Error(); err != nil {
				t.Fatalf("PING after the thaw: %v", err)
			}
			ok, err := k.intact(ctx, other)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				t.Fatalf("a %s deletion that failed at its deadline (%v) reached Redis later and deleted what was made after it", k.name, time.Second)
			}
		})
	}
}
