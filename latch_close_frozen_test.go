package scriptlock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestCloseEndsAwaitOnFrozenServer: Close begins while an Await's read of
// the count hangs on a server that stopped answering (SIGSTOP). rueidis
// drops the connection as dead (ConnWriteTimeout) and makes the read again,
// for as long as its context lasts: the wait ended only with ctx, long after
// Close. Close ends it now, with ErrClosed, as every wait Close ends.
func TestCloseEndsAwaitOnFrozenServer(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	var conns droppedConns
	rc := node.Client(t, func(o *rueidis.ClientOption) {
		o.ConnWriteTimeout = time.Second
		o.DialCtxFn = conns.dial
	})
	c := newTestClient(t, rc)
	h := newTestClient(t, node.Client(t), WithKeyPrefix(c.cfg.prefix))
	ctx := testCtx(t, 30*time.Second)
	if _, err := mustLatch(t, h, "l").TrySetCount(ctx, 1); err != nil {
		t.Fatal(err)
	}
	l := mustLatch(t, c, "l")
	var mu sync.Mutex
	paused, attempted := false, false
	c.setAttemptHook(func(_ context.Context, after bool) {
		mu.Lock()
		defer mu.Unlock()
		attempted = attempted || (paused && !after)
	})
	defer func() { c.setAttemptHook(nil) }()
	res := make(chan error, 1)
	go func() { res <- l.Await(ctx) }()
	time.Sleep(300 * time.Millisecond) // the wait sleeps until its next read
	node.Pause()
	defer node.Resume()
	mu.Lock()
	paused = true
	mu.Unlock()
	if !eventually(10*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return attempted }) {
		t.Fatal("the wait made no read against the frozen server")
	}
	if !conns.allDropped(10 * time.Second) {
		t.Fatal("rueidis did not drop the connection the read hangs on")
	}
	closed := time.Now()
	c.Close()
	select {
	case err := <-res:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("Await ended by Close returned %v, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("Await still running %s after Close", time.Since(closed).Round(time.Second))
	}
}
