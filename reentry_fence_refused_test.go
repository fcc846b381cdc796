package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A shared owner's re-entry refused for the fencing-token counter
// (ErrFenceCounter) proves the owner's hold gone as a refused re-entry does:
// the scripts draw a token only for a lock they find free. The owner's hold
// ends with ErrLockLost then, not at its next renewal.
func TestFenceRefusedReentryEndsOwnersHold(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	for _, lc := range lockCases {
		if !lc.fence || !lc.reentrant() {
			continue
		}
		t.Run(lc.name, func(t *testing.T) {
			l := lc.make(t, c, "fence-reentry-"+lc.name)
			key := l.(interface{ Key() string }).Key()
			ctx := WithOwner(testCtx(t, 20*time.Second), "job-7")
			lctx, err := l.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			node.Do(t, "DEL", key) // the server lost the hold (a failover, say)
			node.Do(t, "SET", redissonName("redisson_lock_token", key), "not a number")
			if rctx, err := l.TryLock(ctx, 0); err == nil {
				_ = l.Unlock(rctx)
				t.Fatal("the re-entry was granted with a counter that holds no integer")
			} else if !errors.Is(err, ErrFenceCounter) {
				t.Fatalf("re-entry: %v; want ErrFenceCounter", err)
			}
			select {
			case <-lctx.Done():
			case <-time.After(time.Second):
				t.Fatal("the owner's hold lives on after its re-entry found the lock free and was refused for its counter")
			}
			if cause := context.Cause(lctx); !errors.Is(cause, ErrLockLost) {
				t.Fatalf("cause = %v, want ErrLockLost", cause)
			}
			if err := l.Unlock(lctx); !errors.Is(err, ErrLockLost) && !errors.Is(err, ErrNotHeld) {
				t.Fatalf("Unlock of the lost hold = %v", err)
			}
			if n, _ := node.Do(t, "EXISTS", key).AsInt64(); n != 0 {
				t.Error("the lock is held on the server")
			}
		})
	}
}
