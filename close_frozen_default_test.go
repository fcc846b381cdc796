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

// TestCloseEndsWaitOnFrozenServerDefaultTimeouts: as
// TestCloseEndsWaitOnFrozenServer, with rueidis's default ConnWriteTimeout:
// Close begins while the waits' attempts hang on a server that stopped
// answering, before rueidis drops their connection, and ends them with
// ErrClosed within the bound of an undo Close waits for.
func TestCloseEndsWaitOnFrozenServerDefaultTimeouts(t *testing.T) {
	t.Parallel()
	closeEndsFrozenWaits(t)
}

// TestCloseEndsWaitOnFrozenServerIdleConn: as
// TestCloseEndsWaitOnFrozenServerDefaultTimeouts, with the waits' attempts
// sent on connections rueidis uses synchronously, one call at a time, where
// it watches a call's deadline but not its cancellation: every connection
// of a client made with DisableAutoPipelining, and, with several pipelining
// connections (PipelineMultiplex), one that never had two calls in flight
// at once. The attempts Close cuts off end all the same.
func TestCloseEndsWaitOnFrozenServerIdleConn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opt  func(*rueidis.ClientOption)
	}{
		{"DisableAutoPipelining", func(o *rueidis.ClientOption) { o.DisableAutoPipelining = true }},
		{"Multiplex", func(o *rueidis.ClientOption) { o.PipelineMultiplex = 3 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			closeEndsFrozenWaits(t, tc.opt)
		})
	}
}

// closeEndsFrozenWaits begins Close while a wait of every kind has an
// attempt in flight on a server that stopped answering, its Client's
// rueidis client made with opts, and checks that each wait ends with
// ErrClosed within 5 s.
func closeEndsFrozenWaits(t *testing.T, opts ...func(*rueidis.ClientOption)) {
	node := redistest.Server(t)
	h := newTestClient(t, node.Client(t))
	c := newTestClient(t, node.Client(t, opts...), WithKeyPrefix(h.cfg.prefix))
	ctx := testCtx(t, 30*time.Second)
	res := make(map[string]chan error)
	var mu sync.Mutex
	paused := false
	started, attempted := map[string]bool{}, map[string]bool{}
	c.setAttemptHook(func(ctx context.Context, after bool) {
		mu.Lock()
		defer mu.Unlock()
		if name, ok := ctx.Value(waitNameKey{}).(string); ok && !after {
			started[name] = true
			if paused {
				attempted[name] = true
			}
		}
	})
	// Not by clearing the hook: waits a failed check leaves running call it.
	defer func() { mu.Lock(); paused = false; mu.Unlock() }()
	for _, wk := range waitKinds {
		if wk.name == "CountDownLatch" {
			continue
		}
		wait, release := wk.setup(t, h, c, "frozen-"+wk.name)
		defer release()
		ch := make(chan error, 1)
		res[wk.name] = ch
		wctx := context.WithValue(ctx, waitNameKey{}, wk.name)
		go func() { ch <- wait(wctx) }()
	}
	// Every wait under way (a loaded machine starts some late), then time
	// for its subscription.
	if !eventually(10*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(started) == len(res)
	}) {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("not every wait made its first attempt: %v", started)
	}
	time.Sleep(300 * time.Millisecond)
	mu.Lock()
	paused = true
	mu.Unlock()
	node.Pause()
	defer node.Resume()
	if !eventually(3*notifyFallback, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(attempted) == len(res)
	}) {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("not every wait made an attempt: %v", attempted)
	}
	time.Sleep(100 * time.Millisecond)
	begun := time.Now()
	closed := make(chan struct{})
	go func() { defer close(closed); c.Close() }()
	end := time.After(5 * time.Second)
	for name, ch := range res {
		select {
		case err := <-ch:
			if !errors.Is(err, ErrClosed) {
				t.Errorf("%s: wait ended by Close returned %v, want ErrClosed", name, err)
			}
		case <-end:
			t.Errorf("%s: wait still running 5 s after Close", name)
		}
	}
	<-closed
	t.Logf("Close returned after %v", time.Since(begun).Round(time.Millisecond))
}
