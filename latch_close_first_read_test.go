package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestCloseEndsAwaitFirstReadIdleConn: Close begins while an Await's first
// read of the count hangs on a server that stopped answering, sent on a
// connection rueidis uses one call at a time (DisableAutoPipelining), where
// it watches the read's deadline but not its cancellation. The wait ends
// with ErrClosed within the bound of an undo Close waits for, and Close
// returns, as for a wait's later reads.
func TestCloseEndsAwaitFirstReadIdleConn(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t, func(o *rueidis.ClientOption) { o.DisableAutoPipelining = true }))
	h := newTestClient(t, node.Client(t), WithKeyPrefix(c.cfg.prefix))
	ctx := testCtx(t, 30*time.Second)
	if _, err := mustLatch(t, h, "first-read").TrySetCount(ctx, 1); err != nil {
		t.Fatal(err)
	}
	l := mustLatch(t, c, "first-read")
	// The read's script loaded and a pooled connection open (it answers
	// false at the wait's end; made again, up to five times, when a loaded
	// machine's server did not answer within the wait).
	for i := 0; ; i++ {
		ok, err := l.AwaitTimeout(ctx, 500*time.Millisecond)
		if ok || (err != nil && i == 4) {
			t.Fatalf("AwaitTimeout on a count of 1: %v, %v", ok, err)
		}
		if err == nil {
			break
		}
	}
	node.Pause()
	defer node.Resume()
	res := make(chan error, 1)
	go func() { res <- l.Await(ctx) }()
	time.Sleep(300 * time.Millisecond) // the first read hangs
	begun := time.Now()
	closed := make(chan time.Duration, 1)
	go func() { c.Close(); closed <- time.Since(begun) }()
	select {
	case err := <-res:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("Await ended by Close returned %v, want ErrClosed", err)
		}
		t.Logf("Await returned after %v", time.Since(begun).Round(time.Millisecond))
	case <-time.After(3 * time.Second):
		t.Errorf("Await still running %s after Close began", time.Since(begun).Round(time.Millisecond))
		select {
		case err := <-res:
			t.Errorf("Await returned %v %s after Close began", err, time.Since(begun).Round(time.Millisecond))
		case <-time.After(15 * time.Second):
		}
	}
	select {
	case d := <-closed:
		t.Logf("Close returned after %v", d.Round(time.Millisecond))
	case <-time.After(closeHang):
		t.Errorf("Close did not return within %s", closeHang)
	}
}
