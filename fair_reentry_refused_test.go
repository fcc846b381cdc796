package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A shared owner's re-entry of a FairMutex is refused only when the owner's
// field is not in the lock hash: another owner holds the lock, or the lock is
// gone and others are queued ahead (the native queue, or Redisson's). Either
// way the owner's hold is gone on the server, and its live hold must end with
// ErrLockLost, as a Mutex's does.
func TestFairRefusedReentryEndsOwnersHold(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	for _, redisson := range []bool{false, true} {
		for _, queueAhead := range []bool{false, true} {
			t.Run(fmt.Sprintf("redisson=%v/queueAhead=%v", redisson, queueAhead), func(t *testing.T) {
				c := newTestClient(t, node.Client(t))
				var opts []LockOption
				if redisson {
					opts = append(opts, WithRedissonFairQueue(0))
				}
				f := mustFair(t, c, "fair-refused-reentry", opts...)
				ctx := WithOwner(testCtx(t, 20*time.Second), "job-7")
				lctx, err := f.Lock(ctx)
				if err != nil {
					t.Fatal(err)
				}
				node.Do(t, "DEL", f.Key()) // the server lost the hold (a failover, say)
				if queueAhead {
					// A live waiter of another client first in line.
					far := time.Now().Add(time.Hour).UnixMilli()
					node.Do(t, "RPUSH", f.queue, "other:1")
					node.Do(t, "ZADD", f.timeouts, fmt.Sprint(far), "other:1")
				} else {
					other := mustFair(t, newTestClient(t, node.Client(t), WithKeyPrefix(c.cfg.prefix)), "fair-refused-reentry", opts...)
					octx, err := other.TryLock(testCtx(t, 5*time.Second), 0)
					if err != nil {
						t.Fatal(err)
					}
					defer other.Unlock(octx)
				}
				if _, err := f.TryLock(ctx, 0); err == nil {
					t.Fatal("the re-entry was granted while the owner's field is gone")
				}
				select {
				case <-lctx.Done():
				case <-time.After(time.Second):
					t.Fatal("the owner's hold lives on after its re-entry was refused")
				}
				if cause := context.Cause(lctx); !errors.Is(cause, ErrLockLost) {
					t.Fatalf("cause = %v, want ErrLockLost", cause)
				}
				if err := f.Unlock(lctx); !errors.Is(err, ErrLockLost) && !errors.Is(err, ErrNotHeld) {
					t.Fatalf("Unlock of the lost hold = %v", err)
				}
			})
		}
	}
}
