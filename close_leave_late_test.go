package scriptlock

import (
	"testing"
	"time"
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
	eachFairQueueHeld(t, "late-first", func(t *testing.T, r *heldFairRig) {
		node, ctx, f := r.node, r.ctx, r.f
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
		if d := r.closeWaiting(t, res); d < closeUndoMax {
			t.Fatalf("Close returned after %v: the first attempt was answered before Close cut the waits' calls off", d)
		}
		r.queueEmptied(t)
	})
}
