package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A ForceUnlock whose script deletes the lock but whose reply never comes
// back: another owner takes the free lock at once, so the holds this Client
// had of it must have ended by then, not live on until their lease runs
// out (or the next renewal finds the lock gone).
func TestForceUnlockLostReplyEndsOwnHolds(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"mutex", "lean"} {
		t.Run(kind, func(t *testing.T) {
			node := redistest.Server(t)
			px := netproxy.New(t, node.Addr)
			c := newTestClient(t, px.Client(t))
			other := newTestClient(t, node.Client(t), WithKeyPrefix(c.cfg.prefix))
			ctx := testCtx(t, 20*time.Second)
			type locker interface {
				LockWithLease(context.Context, time.Duration) (context.Context, error)
				TryLock(context.Context, time.Duration) (context.Context, error)
				Unlock(context.Context) error
				ForceUnlock(context.Context) (bool, error)
			}
			var mine, theirs, warm locker
			if kind == "mutex" {
				mine, theirs, warm = mustMutex(t, c, "force-lost"), mustMutex(t, other, "force-lost"), mustMutex(t, c, "warm")
			} else {
				mine, theirs, warm = mustLean(t, c, "force-lost"), mustLean(t, other, "force-lost"), mustLean(t, c, "warm")
			}
			if _, err := warm.ForceUnlock(ctx); err != nil { // script loaded
				t.Fatal(err)
			}
			lctx, err := mine.LockWithLease(ctx, 30*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			// Replies held back once the record is reserved: the
			// deletion's is the one lost.
			c.testReserved = px.FreezeReplies
			defer px.Thaw()
			fctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := mine.ForceUnlock(fctx)
				done <- err
			}()
			var octx context.Context
			for deadline := time.Now().Add(5 * time.Second); ; {
				if octx, err = theirs.TryLock(ctx, 0); err == nil {
					break
				}
				if !errors.Is(err, ErrNotAcquired) || time.Now().After(deadline) {
					t.Fatalf("the force-unlocked lock was not free: %v", err)
				}
				time.Sleep(5 * time.Millisecond)
			}
			defer theirs.Unlock(octx)
			if lctx.Err() == nil {
				t.Fatal("another owner holds the lock while this Client's force-unlocked hold's context is alive")
			}
			if cause := context.Cause(lctx); !errors.Is(cause, ErrLockLost) {
				t.Fatalf("force-unlocked hold ended with %v, want ErrLockLost", cause)
			}
			if err := <-done; err == nil {
				t.Fatal("ForceUnlock without a reply succeeded")
			}
		})
	}
}
