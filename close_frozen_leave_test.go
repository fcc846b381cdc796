package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestCloseEndsSleepingWaitOnFrozenServer: Close ends waits that sleep
// between attempts, each queued, on a server that just stopped answering:
// their leave of the queue, which cannot reach it, is bounded as an undo
// Close waits for is, not by the release timeout alone.
func TestCloseEndsSleepingWaitOnFrozenServer(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	h := newTestClient(t, node.Client(t))
	c := newTestClient(t, node.Client(t), WithKeyPrefix(h.cfg.prefix))
	ctx := testCtx(t, 30*time.Second)
	res := make(map[string]chan error)
	for _, wk := range waitKinds {
		if wk.name == "CountDownLatch" {
			continue
		}
		wait, release := wk.setup(t, h, c, "sleeping-"+wk.name)
		defer release()
		ch := make(chan error, 1)
		res[wk.name] = ch
		go func() { ch <- wait(ctx) }()
	}
	time.Sleep(300 * time.Millisecond) // every wait sleeps until its next attempt
	node.Pause()
	defer node.Resume()
	begun := time.Now()
	closed := make(chan struct{})
	go func() { defer close(closed); c.Close() }()
	end := time.After(3 * time.Second)
	for name, ch := range res {
		select {
		case err := <-ch:
			if !errors.Is(err, ErrClosed) {
				t.Errorf("%s: wait ended by Close returned %v, want ErrClosed", name, err)
			}
		case <-end:
			t.Errorf("%s: wait still running 3 s after Close", name)
		}
	}
	<-closed
	t.Logf("Close returned after %v", time.Since(begun).Round(time.Millisecond))
}
