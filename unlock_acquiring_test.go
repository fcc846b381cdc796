package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An owner shared through its context (WithOwner) is unlocked by one
// goroutine while another goroutine's Lock of that owner has been granted on
// the server but not yet registered here. The Unlock released the new hold
// by owner, and the Lock then returned a lock context that lived on while
// another owner held the lock.
func TestUnlockWhileOwnersLockInFlight(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"mutex", "lean"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			node := redistest.Server(t)
			c := newTestClient(t, node.Client(t))
			other := newTestClient(t, node.Client(t), WithKeyPrefix(c.cfg.prefix))
			type locker interface {
				Lock(context.Context) (context.Context, error)
				TryLock(context.Context, time.Duration) (context.Context, error)
				Unlock(context.Context) error
			}
			var mine, theirs locker
			if kind == "mutex" {
				mine, theirs = mustMutex(t, c, "unlock-inflight"), mustMutex(t, other, "unlock-inflight")
			} else {
				mine, theirs = mustLean(t, c, "unlock-inflight"), mustLean(t, other, "unlock-inflight")
			}
			ctx := WithOwner(testCtx(t, 20*time.Second), "job-4")
			unlocked := make(chan error, 1)
			c.setGrantHook(func() {
				c.setGrantHook(nil)
				go func() { unlocked <- mine.Unlock(ctx) }()
				select {
				case <-unlocked:
					unlocked <- nil
				case <-time.After(300 * time.Millisecond):
				}
			})
			defer func() { c.setGrantHook(nil) }()
			lctx, err := mine.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			select {
			case <-unlocked:
			case <-time.After(10 * time.Second):
				t.Fatal("Unlock did not return")
			}
			octx, err := theirs.TryLock(testCtx(t, 5*time.Second), 0)
			if err != nil {
				return // the owner still holds it
			}
			defer theirs.Unlock(octx)
			if lctx.Err() == nil {
				t.Fatal("another owner holds the lock while the lock context of the owner's Lock, granted as the owner was unlocked, is alive")
			}
		})
	}
}
