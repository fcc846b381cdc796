package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRecordedDeletionArrivingLateDeletesNothing: a ForceUnlock, or a
// semaphore's or latch's Delete, held up on its way to Redis (a stalled
// link) fails at its caller's deadline; the caller goes on, and the name is
// taken again (another owner's lock, a count set anew). The deletion then
// reaching Redis deleted that: a lock its caller never meant to break. It
// must delete nothing, whether held up before its record was reserved or
// after.
func TestRecordedDeletionArrivingLateDeletesNothing(t *testing.T) {
	type kind struct {
		name string
		// del is the deletion, made through the held-up Client.
		del func(ctx context.Context, c *Client) error
		// take takes the name again through another Client; intact reports
		// whether what take made is still there.
		take   func(ctx context.Context, c *Client) error
		intact func(ctx context.Context, c *Client) (bool, error)
	}
	const name = "late"
	kinds := []kind{
		{"Mutex",
			func(ctx context.Context, c *Client) error {
				_, err := mustMutex(t, c, name).ForceUnlock(ctx)
				return err
			},
			func(ctx context.Context, c *Client) error { _, err := mustMutex(t, c, name).Lock(ctx); return err },
			func(ctx context.Context, c *Client) (bool, error) { return mustMutex(t, c, name).IsLocked(ctx) }},
		{"FairMutex",
			func(ctx context.Context, c *Client) error {
				_, err := mustFair(t, c, name).ForceUnlock(ctx)
				return err
			},
			func(ctx context.Context, c *Client) error { _, err := mustFair(t, c, name).Lock(ctx); return err },
			func(ctx context.Context, c *Client) (bool, error) { return mustFair(t, c, name).IsLocked(ctx) }},
		{"RWMutex",
			func(ctx context.Context, c *Client) error { _, err := mustRW(t, c, name).ForceUnlock(ctx); return err },
			func(ctx context.Context, c *Client) error { _, err := mustRW(t, c, name).Lock(ctx); return err },
			func(ctx context.Context, c *Client) (bool, error) { return mustRW(t, c, name).IsLocked(ctx) }},
		{"LeanMutex",
			func(ctx context.Context, c *Client) error {
				_, err := mustLean(t, c, name).ForceUnlock(ctx)
				return err
			},
			func(ctx context.Context, c *Client) error { _, err := mustLean(t, c, name).Lock(ctx); return err },
			func(ctx context.Context, c *Client) (bool, error) {
				n, err := c.rc.Do(ctx, c.rc.B().Exists().Key(mustLean(t, c, name).Key()).Build()).AsInt64()
				return n == 1, err
			}},
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
		{"PermitSemaphore",
			func(ctx context.Context, c *Client) error { _, err := mustPermits(t, c, name).Delete(ctx); return err },
			func(ctx context.Context, c *Client) error {
				_, err := mustPermits(t, c, name).TrySetPermits(ctx, 5)
				return err
			},
			func(ctx context.Context, c *Client) (bool, error) {
				n, err := mustPermits(t, c, name).AvailablePermits(ctx)
				return n == 5, err
			}},
		{"CountDownLatch",
			func(ctx context.Context, c *Client) error { _, err := mustLatch(t, c, name).Delete(ctx); return err },
			func(ctx context.Context, c *Client) error {
				_, err := mustLatch(t, c, name).TrySetCount(ctx, 3)
				return err
			},
			func(ctx context.Context, c *Client) (bool, error) {
				n, err := mustLatch(t, c, name).Count(ctx)
				return n == 3, err
			}},
	}
	for _, k := range kinds {
		for _, afterReserve := range []bool{false, true} {
			sub := k.name + "/held-before-sending"
			if afterReserve {
				sub = k.name + "/held-after-reserving"
			}
			t.Run(sub, func(t *testing.T) {
				node := redistest.Server(t)
				px := netproxy.New(t, node.Addr)
				c := newTestClient(t, px.Client(t))
				other := newTestClient(t, node.Client(t), WithKeyPrefix(c.cfg.prefix))
				ctx := testCtx(t, 20*time.Second)
				// Scripts loaded, connection open.
				if err := k.del(ctx, c); err != nil {
					t.Fatal(err)
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
				err := k.del(dctx, c)
				cancel()
				c.testReserved = nil
				if err == nil {
					t.Fatal("the deletion succeeded through a frozen link")
				}
				if d := time.Since(start); d > wait+time.Second {
					t.Fatalf("the deletion took %v, past its deadline of %v", d, wait)
				}
				if err := k.take(ctx, other); err != nil {
					t.Fatalf("taking the name again: %v", err)
				}
				// Past the deadline the reservation was made for, with room.
				time.Sleep(time.Until(start.Add(wait + 300*time.Millisecond)))
				px.Thaw()
				// The held-up call reaches Redis now: give it time to run.
				time.Sleep(300 * time.Millisecond)
				if err := c.rc.Do(ctx, c.rc.B().Ping().Build()).Error(); err != nil {
					t.Fatalf("PING after the thaw: %v", err)
				}
				ok, err := k.intact(ctx, other)
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					t.Fatalf("a %s deletion that failed at its deadline reached Redis later and deleted what was made after it", k.name)
				}
			})
		}
	}
}
