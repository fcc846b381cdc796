package scriptlock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestCloseCutAttemptLeavesQueue: a queued FairMutex waiter's later attempt
// is in flight on a server busy for longer than the second after which
// Close cuts such an attempt off (CLIENT PAUSE here). The wait ends with
// ErrClosed and the attempt is undone; the waiter's entry in the queue, which
// the server, answering again, could take out, is taken out too: left
// behind, it holds up every waiter behind it until it expires (in
// Redisson's queue until its score passes, up to threadWaitTime times its
// place).
func TestCloseCutAttemptLeavesQueue(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"Native", "Redisson"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			node := redistest.Server(t)
			prefix := sharedPrefix(t)
			h := newTestClient(t, node.Client(t), prefix)
			c := newTestClient(t, node.Client(t), prefix)
			ctx := testCtx(t, 20*time.Second)
			var opts []LockOption
			if kind == "Redisson" {
				opts = append(opts, WithRedissonFairQueue(0))
			}
			holder, f := mustFair(t, h, "cut-queue", opts...), mustFair(t, c, "cut-queue", opts...)
			hctx, err := holder.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Unlock(hctx)
			paused := make(chan struct{})
			var once sync.Once
			c.testHookAttempt = func(_ context.Context, after bool) {
				if !after {
					// The wait's first attempt after subscribing: the
					// server answers it only after the pause.
					once.Do(func() {
						pauseServer(t, ctx, node, 1600*time.Millisecond)
						close(paused)
					})
				}
			}
			res := make(chan error, 1)
			go func() {
				_, err := f.Lock(ctx)
				res <- err
			}()
			<-paused
			time.Sleep(100 * time.Millisecond)
			begun := time.Now()
			c.Close()
			if err := <-res; !errors.Is(err, ErrClosed) {
				t.Fatalf("wait ended by Close returned %v, want ErrClosed", err)
			}
			t.Logf("Close returned after %v", time.Since(begun).Round(time.Millisecond))
			if !eventually(time.Second, func() bool { return queueLen(t, node, holder) == 0 }) {
				t.Fatalf("queue length %d after Close: the waiter's entry was left behind, though the server answered", queueLen(t, node, holder))
			}
		})
	}
}
