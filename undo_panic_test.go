package scriptlock

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// panickyUndoSetup is a Client reaching a server through a proxy, whose
// rueidis client panics on a Semaphore's undo, and a Semaphore of one
// permit on it, its acquisition's script loaded.
func panickyUndoSetup(t *testing.T, name string, logs *syncBuffer) (*netproxy.Proxy, *Client, *Semaphore) {
	t.Helper()
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	rc := newPanickyClient(px.Client(t), scriptRuns(semaphoreUndoSHA(t, node.Client(t))))
	rc.left.Store(-1)
	c := newTestClient(t, rc, WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	sem := mustSem(t, c, name)
	ctx := testCtx(t, 10*time.Second)
	if _, err := sem.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := sem.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := sem.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	return px, c, sem
}

// The background undo of an acquisition of unknown outcome meets a client
// wrapper that panics: nobody waits for it, so the panic is logged, and
// Close completes. It ran on the goroutine the undo's call is bounded by,
// which nothing recovers, and crashed the process.
func TestBackgroundUndoPanicLogged(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	px, c, sem := panickyUndoSetup(t, "undo-panic-background", &logs)
	px.Freeze()
	err := sem.TryAcquire(context.Background(), 1, 300*time.Millisecond)
	px.Thaw()
	var na *NotAcquiredError
	if !errors.As(err, &na) || !na.Unanswered {
		t.Fatalf("TryAcquire, server frozen: %v, want a NotAcquiredError with Unanswered", err)
	}
	if !eventually(5*time.Second, func() bool { return strings.Contains(logs.String(), "panic recovered") }) {
		t.Fatalf("the undo's panic was not logged; log:\n%s", logs.String())
	}
	closed := make(chan struct{})
	go func() { defer close(closed); c.Close() }()
	select {
	case <-closed:
	case <-time.After(closeHang):
		t.Fatalf("Close did not return within %s", closeHang)
	}
}

// The undo Close has an acquisition of unknown outcome make on its own
// goroutine (Close runs no more background work) meets a client wrapper
// that panics: the panic reaches TryAcquire's caller, as a panic of the
// acquisition's own call does, instead of crashing the process from the
// goroutine the undo's call is bounded by. Close completes.
func TestCloseUndoPanicReachesCaller(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	px, c, sem := panickyUndoSetup(t, "undo-panic-close", &logs)
	px.Freeze()
	defer px.Thaw()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	caught := make(chan any, 1)
	go func() { caught <- panicked(func() { _ = sem.TryAcquire(ctx, 1, 0) }) }()
	time.Sleep(100 * time.Millisecond) // the attempt is on its way
	closed := make(chan struct{})
	go func() { defer close(closed); c.Close() }()
	select {
	case p := <-caught:
		if p == nil {
			t.Fatal("TryAcquire did not panic")
		}
	case <-time.After(closeHang):
		t.Fatalf("TryAcquire did not return within %s", closeHang)
	}
	px.Thaw()
	select {
	case <-closed:
	case <-time.After(closeHang):
		t.Fatalf("Close did not return within %s", closeHang)
	}
}

// A wait's settling undo of an attempt whose reply was lost with its
// connection meets a client wrapper that panics once: the panic reaches
// Acquire's caller, and the undo goes on in the background, as for an
// attempt of unknown outcome that ends the call, so the permit the attempt
// took comes back. Left as it was, the permit, which has no lease, was lost
// for good.
func TestSettleUndoPanicUndoneLater(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	var d closedConns
	prc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{px.Addr}, DisableCache: true,
		PipelineMultiplex: -1, DialCtxFn: d.dial})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prc.Close)
	rc := newPanickyClient(prc, scriptRuns(semaphoreUndoSHA(t, node.Client(t))))
	var logs syncBuffer
	c := newTestClient(t, rc, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	h := newTestClient(t, node.Client(t), WithKeyPrefix(c.cfg.prefix))
	ctx := testCtx(t, 20*time.Second)
	sem := mustSem(t, c, "undo-panic-settle")
	if _, err := sem.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := sem.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := sem.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	hs := mustSem(t, h, "undo-panic-settle")
	rc.left.Store(1)
	px.FreezeReplies()
	caught := make(chan any, 1)
	go func() { caught <- panicked(func() { _ = sem.TryAcquire(ctx, 1, 10*time.Second) }) }()
	// The attempt took the permit; its reply is held back.
	if !eventually(5*time.Second, func() bool { n, err := hs.AvailablePermits(ctx); return err == nil && n == 0 }) {
		t.Fatal("the attempt took no permit")
	}
	d.closeAll() // the reply is lost with its connection
	px.Thaw()
	select {
	case p := <-caught:
		if p == nil {
			t.Fatal("TryAcquire did not panic")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("TryAcquire did not return within 5 s")
	}
	if !eventually(5*time.Second, func() bool { n, err := hs.AvailablePermits(ctx); return err == nil && n == 1 }) {
		n, err := hs.AvailablePermits(ctx)
		t.Fatalf("the permit the attempt took did not come back: %d available (%v)", n, err)
	}
}
