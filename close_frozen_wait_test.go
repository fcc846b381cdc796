package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestCloseEndsWaitOnFrozenServer: Close begins while waits' attempts hang
// on a server that stopped answering (SIGSTOP). rueidis drops their
// connection as dead (ConnWriteTimeout), and the waits, which would settle
// the attempts and wait on, end instead: Close ended them, and they return
// ErrClosed, as every wait Close ends does, not the transport's error.
func TestCloseEndsWaitOnFrozenServer(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	h := newTestClient(t, node.Client(t))
	rc := node.Client(t, func(o *rueidis.ClientOption) { o.ConnWriteTimeout = time.Second })
	c := newTestClient(t, rc, WithKeyPrefix(h.cfg.prefix))
	ctx := testCtx(t, 30*time.Second)
	hm := mustMutex(t, h, "m")
	if _, err := hm.LockWithLease(ctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	hs, err := h.Semaphore("s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hs.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := hs.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	m := mustMutex(t, c, "m")
	s, err := c.Semaphore("s")
	if err != nil {
		t.Fatal(err)
	}
	waits := map[string]func() error{
		"Mutex":     func() error { _, err := m.Lock(ctx); return err },
		"Semaphore": func() error { return s.Acquire(ctx, 1) },
	}
	res := make(map[string]chan error)
	for name, w := range waits {
		ch := make(chan error, 1)
		res[name] = ch
		go func() { ch <- w() }()
	}
	time.Sleep(300 * time.Millisecond) // every wait sleeps until its next attempt
	node.Pause()
	defer node.Resume()
	// Each wait's next attempt (at most 2 s later) hangs, and its
	// connection is dropped as dead a second after that.
	time.Sleep(3500 * time.Millisecond)
	c.Close()
	for name, ch := range res {
		select {
		case err := <-ch:
			if !errors.Is(err, ErrClosed) {
				t.Errorf("%s: wait ended by Close returned %v, want ErrClosed", name, err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("%s: wait still running 5 s after Close", name)
		}
	}
}
