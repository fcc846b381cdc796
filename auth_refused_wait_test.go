package scriptlock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

func isNoAuth(err error) bool {
	var re *rueidis.RedisError
	return errors.As(err, &re) && strings.HasPrefix(re.Error(), "NOAUTH ")
}

// TestWaitEndsOnAuthRefusal: a server whose password changed under the
// Client (requirepass set, its connections closed) refuses every
// reconnection: rueidis reports the call that found its connection closed
// as EOF, and the calls after it as NOAUTH. A waiting Lock or Acquire whose
// attempt broke that way settles it by owner before it waits on, and the
// settling undo gets NOAUTH, which no retry changes: the wait must end with
// it, as a single attempt does, not try again until its context or wait
// ends and then report only the EOF.
func TestWaitEndsOnAuthRefusal(t *testing.T) {
	t.Parallel()
	type waiter struct {
		name string
		wait func(t *testing.T, c *Client, ctx context.Context) error
	}
	var waiters []waiter
	for _, lc := range lockCases {
		waiters = append(waiters,
			waiter{lc.name + "/Lock", func(t *testing.T, c *Client, ctx context.Context) error {
				_, err := lc.make(t, c, "noauth").Lock(ctx)
				return err
			}},
			waiter{lc.name + "/TryLock", func(t *testing.T, c *Client, ctx context.Context) error {
				_, err := lc.make(t, c, "noauth").TryLock(ctx, 8*time.Second)
				return err
			}})
	}
	waiters = append(waiters,
		waiter{"Semaphore", func(t *testing.T, c *Client, ctx context.Context) error {
			return mustSem(t, c, "noauth").Acquire(ctx, 1)
		}},
		waiter{"PermitSemaphore", func(t *testing.T, c *Client, ctx context.Context) error {
			_, err := mustPermits(t, c, "noauth").Acquire(ctx, time.Minute)
			return err
		}})
	for _, w := range waiters {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			node := redistest.Server(t)
			ctl := rawClient(t, node.Addr)
			c := newTestClient(t, node.Client(t), WithFailoverGuard(false, 0))
			ctx := testCtx(t, 30*time.Second)
			// A first call opens the Client's connection.
			if _, err := mustMutex(t, c, "warm").TryLock(ctx, 0); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"CONFIG", "SET", "requirepass", "rotated"}, {"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"}} {
				if err := ctl.Do(ctx, ctl.B().Arbitrary(args...).Build()).Error(); err != nil {
					t.Fatal(err)
				}
			}
			t.Cleanup(func() {
				_ = ctl.Do(context.Background(), ctl.B().Arbitrary("CONFIG", "SET", "requirepass", "").Build()).Error()
			})
			wctx, cancel := context.WithTimeout(ctx, 8*time.Second)
			defer cancel()
			start := time.Now()
			err := w.wait(t, c, wctx)
			if took := time.Since(start); took > 4*time.Second || !isNoAuth(err) {
				t.Fatalf("a wait against a server refusing the Client's password: %v after %s, want NOAUTH at once", err, took.Round(time.Millisecond))
			}
		})
	}
}
