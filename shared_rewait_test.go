package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An owner shared through its context (WithOwner) that waits again right
// after a wait of it ended with its context keeps the place the new wait
// takes: the first wait leaves the line in the background (its caller's
// deadline has passed), and that leave, reaching the server after the new
// wait's first attempt, took the new wait's place out of the waiter set or
// queue (the same field). Releases then woke nobody for it: a Mutex waiter
// slept until its fallback call (a third of the waiter timeout) beside a
// free lock, and a FairMutex waiter lost its place in line.
func TestSharedOwnerWaitsAgainKeepsPlace(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"Mutex", "Fair", "FairRedisson"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			node := redistest.Server(t)
			prefix := sharedPrefix(t)
			c := newTestClient(t, node.Client(t), prefix, WithWaiterTimeout(time.Minute))
			other := newTestClient(t, node.Client(t), prefix)
			ctx := testCtx(t, 60*time.Second)
			var l, holder Locker
			var placed func(field string) bool
			switch kind {
			case "Mutex":
				m := mustMutex(t, c, "rewait")
				l, holder = m, mustMutex(t, other, "rewait")
				placed = func(field string) bool {
					err := node.Do(t, "ZSCORE", m.waiters, field).Error()
					return !rueidis.IsRedisNil(err)
				}
			default:
				var opts []LockOption
				if kind == "FairRedisson" {
					opts = append(opts, WithRedissonFairQueue(0))
				}
				f := mustFair(t, c, "rewait", opts...)
				l, holder = f, mustFair(t, other, "rewait", opts...)
				placed = func(field string) bool {
					err := node.Do(t, "LPOS", f.queue, field).Error()
					return !rueidis.IsRedisNil(err)
				}
			}
			hctx, err := holder.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Unlock(hctx)
			owner := WithOwner(ctx, "worker")
			field := c.id + ":worker"
			for i := range 40 {
				first, cancel := context.WithCancel(owner)
				done := make(chan error, 1)
				go func() {
					_, err := l.Lock(first)
					done <- err
				}()
				if !eventually(5*time.Second, func() bool { return placed(field) }) {
					t.Fatalf("round %d: the first wait never took a place", i)
				}
				cancel()
				if err := <-done; !errors.Is(err, context.Canceled) {
					t.Fatalf("round %d: first wait: %v, want context.Canceled", i, err)
				}
				// The same owner waits again at once.
				again, cancelAgain := context.WithCancel(owner)
				go func() {
					_, err := l.Lock(again)
					done <- err
				}()
				time.Sleep(50 * time.Millisecond)
				kept := eventually(time.Second, func() bool { return placed(field) })
				cancelAgain()
				if err := <-done; !errors.Is(err, context.Canceled) {
					t.Fatalf("round %d: second wait: %v, want context.Canceled", i, err)
				}
				if !kept {
					t.Fatalf("round %d: the second wait has no place in line 50 ms after it began: the first wait's leave took it", i)
				}
				if !eventually(5*time.Second, func() bool { return !placed(field) }) {
					t.Fatalf("round %d: the place stayed after both waits ended", i)
				}
			}
		})
	}
}
