package scriptlock

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
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
	var conns droppedConns
	rc := node.Client(t, func(o *rueidis.ClientOption) {
		o.ConnWriteTimeout = time.Second
		o.DialCtxFn = conns.dial
	})
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
	waits := map[string]func(ctx context.Context) error{
		"Mutex":     func(ctx context.Context) error { _, err := m.Lock(ctx); return err },
		"Semaphore": func(ctx context.Context) error { return s.Acquire(ctx, 1) },
	}
	var mu sync.Mutex
	paused := false
	attempted := map[string]bool{} // waits with an attempt made since the pause
	c.setAttemptHook(func(ctx context.Context, after bool) {
		mu.Lock()
		defer mu.Unlock()
		if name, ok := ctx.Value(waitNameKey{}).(string); ok && paused && !after {
			attempted[name] = true
		}
	})
	defer func() { c.setAttemptHook(nil) }()
	res := make(map[string]chan error)
	for name, w := range waits {
		ch := make(chan error, 1)
		res[name] = ch
		wctx := context.WithValue(ctx, waitNameKey{}, name)
		go func() { ch <- w(wctx) }()
	}
	time.Sleep(300 * time.Millisecond) // every wait sleeps until its next attempt
	node.Pause()
	defer node.Resume()
	mu.Lock()
	paused = true
	mu.Unlock()
	// Each wait's next attempt (at most notifyFallback later) hangs, and
	// its connection is dropped as dead (ConnWriteTimeout): the waits then
	// settle their attempts against the frozen server.
	if !eventually(10*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(attempted) == len(waits)
	}) {
		t.Fatalf("not every wait made an attempt against the frozen server: %v", attempted)
	}
	if !conns.allDropped(10 * time.Second) {
		t.Fatal("rueidis did not drop the connection the attempts hang on")
	}
	time.Sleep(100 * time.Millisecond) // the waits are settling their attempts
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

// droppedConns is a rueidis dialer that tells when rueidis has closed every
// connection it opened so far (dropped them as dead).
type droppedConns struct {
	mu    sync.Mutex
	conns []*droppedConn
}

type droppedConn struct {
	net.Conn
	once   sync.Once
	closed chan struct{}
}

func (c *droppedConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

func (d *droppedConns) dial(ctx context.Context, addr string, nd *net.Dialer, _ *tls.Config) (net.Conn, error) {
	c, err := nd.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	dc := &droppedConn{Conn: c, closed: make(chan struct{})}
	d.mu.Lock()
	d.conns = append(d.conns, dc)
	d.mu.Unlock()
	return dc, nil
}

// allDropped reports whether every connection opened until now is closed
// within d.
func (d *droppedConns) allDropped(within time.Duration) bool {
	d.mu.Lock()
	open := append([]*droppedConn(nil), d.conns...)
	d.mu.Unlock()
	end := time.After(within)
	for _, c := range open {
		select {
		case <-c.closed:
		case <-end:
			return false
		}
	}
	return true
}
