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
	// The hook sees the reads of a subscribed wait only (waitOn).
	var mu sync.Mutex
	paused, attempted := false, false
	reads, inFlight := 0, 0
	c.setAttemptHook(func(_ context.Context, after bool) {
		mu.Lock()
		defer mu.Unlock()
		if after {
			reads++
			inFlight--
		} else {
			inFlight++
		}
		attempted = attempted || (paused && !after)
	})
	defer func() { c.setAttemptHook(nil) }()
	res := make(chan error, 1)
	go func() { res <- l.Await(ctx) }()
	// Subscribed and read once: the wait sleeps until its next read. A
	// fixed pause here left a loaded machine's wait still subscribing when
	// the server froze, and such a wait makes no read the hook sees.
	if !eventually(10*time.Second, func() bool { mu.Lock(); defer mu.Unlock(); return reads > 0 }) {
		t.Fatal("the wait made no read after subscribing")
	}
	node.Pause()
	defer node.Resume()
	mu.Lock()
	paused = true
	// A read begun as the server froze hangs on it as well.
	attempted = inFlight > 0
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
