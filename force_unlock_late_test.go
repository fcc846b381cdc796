package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRecordedDeletionArrivingLateDeletesNothing: a ForceUnlock, a
// semaphore's or latch's Delete, a DrainPermits or a PermitSemaphore's
// SetPermits held up on its way to Redis (a stalled link) fails at its
// caller's deadline; the caller goes on, and the name is taken again
// (another owner's lock, a count set anew, permits released). The call then
// reaching Redis changed that: deleted a lock its caller never meant to
// break, took permits returned to nobody, undid a total set since. It must
// change nothing, whether held up before its record was reserved, after,
// or with its reservation held up too (which then lasts past the deadline
// by as long as it was held up).
func TestRecordedDeletionArrivingLateDeletesNothing(t *testing.T) {
	t.Parallel()
	type kind struct {
		name string
		// del is the call, made through the held-up Client.
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
		{"DrainPermits",
			func(ctx context.Context, c *Client) error {
				_, err := mustSem(t, c, name).DrainPermits(ctx)
				return err
			},
			func(ctx context.Context, c *Client) error { return mustSem(t, c, name).Release(ctx, 5) },
			func(ctx context.Context, c *Client) (bool, error) {
				n, err := mustSem(t, c, name).AvailablePermits(ctx)
				return n == 5, err
			}},
		{"SetPermits",
			func(ctx context.Context, c *Client) error { return mustPermits(t, c, name).SetPermits(ctx, 3) },
			func(ctx context.Context, c *Client) error { return mustPermits(t, c, name).SetPermits(ctx, 7) },
			func(ctx context.Context, c *Client) (bool, error) {
				n, err := mustPermits(t, c, name).AvailablePermits(ctx)
				return n == 7, err
			}},
	}
	// warm readies the name and loads the scripts, where the call itself
	// does not.
	warms := map[string]func(ctx context.Context, c *Client) error{
		"DrainPermits": func(ctx context.Context, c *Client) error {
			if _, err := mustSem(t, c, name).TrySetPermits(ctx, 3); err != nil {
				return err
			}
			_, err := mustSem(t, c, name).DrainPermits(ctx)
			return err
		},
		"SetPermits": func(ctx context.Context, c *Client) error { return mustPermits(t, c, name).SetPermits(ctx, 2) },
	}
	const (
		beforeSending = "held-before-sending"
		afterReserve  = "held-after-reserving"
		reserveHeld   = "reservation-held-up"
	)
	for _, k := range kinds {
		for _, mode := range []string{beforeSending, afterReserve, reserveHeld} {
			t.Run(k.name+"/"+mode, func(t *testing.T) {
				t.Parallel()
				node := redistest.Server(t)
				px := netproxy.New(t, node.Addr)
				c := newTestClient(t, px.Client(t))
				other := newTestClient(t, node.Client(t), WithKeyPrefix(c.cfg.prefix))
				ctx := testCtx(t, 20*time.Second)
				// Scripts loaded, connection open.
				warm := k.del
				if w, ok := warms[k.name]; ok {
					warm = w
				}
				if err := warm(ctx, c); err != nil {
					t.Fatal(err)
				}
				const wait = time.Second
				start := time.Now()
				switch mode {
				case beforeSending:
					px.Freeze()
				case afterReserve:
					c.testReserved = px.Freeze
				case reserveHeld:
					// The reservation held up for 600 ms, the call after it
					// until well past the caller's deadline.
					px.Freeze()
					c.testReserved = px.Freeze
					thaw := time.AfterFunc(600*time.Millisecond, px.Thaw)
					defer thaw.Stop()
				}
				defer px.Thaw()
				dctx, cancel := context.WithTimeout(ctx, wait)
				err := k.del(dctx, c)
				cancel()
				c.testReserved = nil
				if err == nil {
					t.Fatal("the call succeeded through a frozen link")
				}
				if d := time.Since(start); d > wait+time.Second {
					t.Fatalf("the call took %v, past its deadline of %v", d, wait)
				}
				if err := k.take(ctx, other); err != nil {
					t.Fatalf("taking the name again: %v", err)
				}
				// Past the caller's deadline; with the reservation held up,
				// within the time it then outlasts the deadline by.
				late := 300 * time.Millisecond
				if mode == reserveHeld {
					late = 250 * time.Millisecond
				}
				time.Sleep(time.Until(start.Add(wait + late)))
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
					t.Fatalf("a %s that failed at its deadline reached Redis later and changed what was made after it", k.name)
				}
			})
		}
	}
}
