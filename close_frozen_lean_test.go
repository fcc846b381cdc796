package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestCloseEndsLeanWaitOnFrozenServer: a LeanMutex's Lock polls the lock
// while it waits, so an attempt of it is in flight, almost always, when the
// server stops answering; Close cuts it off as it cuts off any waiting
// call's attempt after its first, and the wait ends with ErrClosed within
// the bound of an undo Close waits for, not when rueidis drops the
// connection (ConnWriteTimeout, 10 s by default).
func TestCloseEndsLeanWaitOnFrozenServer(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	h := newTestClient(t, node.Client(t))
	c := newTestClient(t, node.Client(t), WithKeyPrefix(h.cfg.prefix))
	ctx := testCtx(t, 30*time.Second)
	hl := mustLean(t, h, "frozen-lean")
	if _, err := hl.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	wl := mustLean(t, c, "frozen-lean")
	res := make(chan error, 1)
	go func() {
		_, err := wl.Lock(ctx)
		res <- err
	}()
	time.Sleep(300 * time.Millisecond)
	node.Pause()
	defer node.Resume()
	time.Sleep(100 * time.Millisecond)
	begun := time.Now()
	closed := make(chan struct{})
	go func() { defer close(closed); c.Close() }()
	select {
	case err := <-res:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("wait ended by Close returned %v, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("wait still running 5 s after Close")
	}
	<-closed
	t.Logf("Close returned after %v", time.Since(begun).Round(time.Millisecond))
}
