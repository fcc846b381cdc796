package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestCloseLeavesLineAfterLateFirstAttempt: a wait whose first attempt the
// server answers only after Close cut the waits' calls off (a server busy
// for longer than that second: CLIENT PAUSE here) has queued its waiter, and
// ends with ErrClosed. Its leave of the line, which the server answers at
// once, is made all the same: an entry left behind holds up every waiter
// behind it until it expires (in Redisson's protocol, until its score
// passes).
func TestCloseLeavesLineAfterLateFirstAttempt(t *testing.T) {
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
			holder, f := mustFair(t, h, "late-first", opts...), mustFair(t, c, "late-first", opts...)
			hctx, err := holder.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Unlock(hctx)
			// c's connection is open before the pause.
			if _, err := f.State(ctx); err != nil {
				t.Fatal(err)
			}
			pauseServer(t, ctx, node, 1600*time.Millisecond)
			res := make(chan error, 1)
			go func() {
				_, err := f.Lock(ctx)
				res <- err
			}()
			time.Sleep(150 * time.Millisecond) // the first attempt waits on the paused server
			begun := time.Now()
			c.Close()
			if err := <-res; !errors.Is(err, ErrClosed) {
				t.Fatalf("wait ended by Close returned %v, want ErrClosed", err)
			}
			if d := time.Since(begun); d < closeUndoMax {
				t.Fatalf("Close returned after %v: the first attempt was answered before Close cut the waits' calls off", d)
			}
			if !eventually(time.Second, func() bool { return queueLen(t, node, holder) == 0 }) {
				t.Fatalf("queue length %d after Close: the waiter's entry was left behind, though the server answered", queueLen(t, node, holder))
			}
		})
	}
}
