package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// The undo of an attempt of unknown outcome of an owner shared through its
// context, which takes out of a FairMutex's queue the place the attempt may
// have taken late once the owner's wait is over, does not take the place a
// new wait of the owner took meanwhile: it looked whether the owner waited
// again, then left the line by the owner's field, so a wait that began
// between the two (a loaded machine) lost its place to it and slept beside
// the line for a third of the waiter timeout.
func TestSharedOwnerUndoLeaveKeepsNewPlace(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"Fair", "FairRedisson"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			node := redistest.Server(t)
			prefix := sharedPrefix(t)
			c := newTestClient(t, node.Client(t), prefix, WithWaiterTimeout(time.Minute))
			other := newTestClient(t, node.Client(t), prefix)
			ctx := testCtx(t, 30*time.Second)
			var opts []LockOption
			if kind == "FairRedisson" {
				opts = append(opts, WithRedissonFairQueue(0))
			}
			f := mustFair(t, c, "undo-rewait", opts...)
			holder := mustFair(t, other, "undo-rewait", opts...)
			hctx, err := holder.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Unlock(hctx)
			placed := func(field string) bool {
				return !rueidis.IsRedisNil(node.Do(t, "LPOS", f.queue, field).Error())
			}
			owner := WithOwner(ctx, "worker")
			field := c.id + ":worker"
			again, cancelAgain := context.WithCancel(owner)
			defer cancelAgain()
			done := make(chan error, 1)
			hooked := make(chan struct{})
			// The owner waits again just as the undo found it not waiting.
			c.testHookLeaveLate = func() {
				defer close(hooked)
				go func() {
					_, err := f.Lock(again)
					done <- err
				}()
				eventually(500*time.Millisecond, func() bool { return placed(field) })
			}
			// An attempt of unknown outcome of a wait that is over.
			ended := &waitEnd{wait: -1}
			ended.over.Store(true)
			const lease = 30 * time.Second
			c.undoLaterQueued(f, field, lease, time.Now().Add(lease), 0, ended)
			select {
			case <-hooked:
			case <-time.After(10 * time.Second):
				t.Fatal("the undo never came to leave the line")
			}
			// Once the undo's leave is over, the new wait holds its place.
			kept := eventually(2*time.Second, func() bool { return placed(field) })
			if kept {
				time.Sleep(300 * time.Millisecond)
				kept = placed(field)
			}
			if !kept {
				t.Error("the new wait of the owner has no place in line: the undo's leave, sent after it looked whether the owner waited, took it")
			}
			cancelAgain()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("the new wait: %v, want context.Canceled", err)
			}
		})
	}
}
