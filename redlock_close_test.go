package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A RedLock whose nodes' Clients are closed (a majority of them) cannot
// ever be granted: Lock ends with ErrClosed instead of trying until its
// context ends.
func TestRedLockLockAfterClose(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	r := mustRedLock(t, "job", cs, WithNodeTimeout(time.Second))
	cs[0].Close()
	cs[1].Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	_, err := r.Lock(ctx)
	if !errors.Is(err, ErrClosed) || time.Since(start) > time.Second {
		t.Fatalf("Lock with 2 of 3 Clients closed: %v after %s, want ErrClosed at once", err, time.Since(start))
	}
}

// A Lock waiting for a held RedLock ends with ErrClosed once a majority of
// its nodes' Clients close.
func TestRedLockCloseWhileWaiting(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	prefix := sharedPrefix(t)
	holders := make([]*Client, 3)
	cs := make([]*Client, 3)
	for i, n := range nodes {
		holders[i] = newTestClient(t, n.Client(t), prefix)
		cs[i] = newTestClient(t, n.Client(t), prefix)
	}
	ctx := testCtx(t, 30*time.Second)
	if _, err := mustRedLock(t, "job", holders, WithNodeTimeout(time.Second)).Lock(ctx); err != nil {
		t.Fatal(err)
	}
	r := mustRedLock(t, "job", cs, WithNodeTimeout(time.Second))
	done := make(chan error, 1)
	go func() {
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, err := r.Lock(wctx)
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	cs[0].Close()
	cs[2].Close()
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("Lock after a majority of Clients closed: %v, want ErrClosed", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Lock still waiting 2s after a majority of its Clients closed")
	}
}

// A RedLock whose nodes' Clients are closed fails with ErrClosed at once,
// asking their servers nothing: the check that no two nodes reach one
// server asked a silent node's server for its run_id through its closed
// Client first, and the Lock waited the node timeout for it.
func TestRedLockLockAfterCloseAsksNothing(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	r := mustRedLock(t, "job", cs, WithNodeTimeout(time.Second))
	cs[0].Close()
	cs[1].Close()
	nodes[0].Pause()
	defer nodes[0].Resume()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	_, err := r.Lock(ctx)
	if took := time.Since(start); !errors.Is(err, ErrClosed) || took > 300*time.Millisecond {
		t.Fatalf("Lock with 2 of 3 Clients closed, one server silent: %v after %s, want ErrClosed at once", err, took.Round(time.Millisecond))
	}
}
