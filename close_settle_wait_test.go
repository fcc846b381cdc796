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

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// closedConns is a rueidis dialer whose connections the test can close
// under the calls waiting on them, as rueidis itself does with one it drops
// as dead while a call reads from it: that call fails with the read's "use
// of closed network connection", not with the error the connection was
// dropped for.
type closedConns struct {
	mu    sync.Mutex
	conns []net.Conn
}

func (d *closedConns) dial(ctx context.Context, addr string, nd *net.Dialer, _ *tls.Config) (net.Conn, error) {
	c, err := nd.DialContext(ctx, "tcp", addr)
	if err == nil {
		d.mu.Lock()
		d.conns = append(d.conns, c)
		d.mu.Unlock()
	}
	return c, err
}

func (d *closedConns) closeAll() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.conns {
		c.Close()
	}
	d.conns = nil
}

type waitNameKey struct{}

// waitsInFlight is a wait of every kind but CountDownLatch's on one Client,
// each refused by a lock another Client holds, and which of them have sent an
// attempt since freeze.
type waitsInFlight struct {
	mu       sync.Mutex
	frozen   bool
	settled  map[string]bool       // a whole attempt made since freeze
	inFlight map[string]bool       // an attempt sent after that
	res      map[string]chan error // each wait's result, by kind
}

// startWaitsInFlight starts the waits on c, their locks taken by h; names
// begin with prefix. The holds are given back when the test ends.
func startWaitsInFlight(ctx context.Context, t *testing.T, h, c *Client, prefix string) *waitsInFlight {
	t.Helper()
	w := &waitsInFlight{settled: map[string]bool{}, inFlight: map[string]bool{}, res: map[string]chan error{}}
	c.setAttemptHook(func(ctx context.Context, after bool) {
		w.mu.Lock()
		defer w.mu.Unlock()
		name, ok := ctx.Value(waitNameKey{}).(string)
		switch {
		case !ok || !w.frozen:
		case after:
			w.settled[name] = true
		case w.settled[name]:
			w.inFlight[name] = true
		}
	})
	t.Cleanup(func() { c.setAttemptHook(nil) })
	for _, wk := range waitKinds {
		if wk.name == "CountDownLatch" {
			continue // a read: rueidis makes it again on a broken connection
		}
		wait, release := wk.setup(t, h, c, prefix+wk.name)
		t.Cleanup(release)
		ch := make(chan error, 1)
		w.res[wk.name] = ch
		wctx := context.WithValue(ctx, waitNameKey{}, wk.name)
		go func() { ch <- wait(wctx) }()
	}
	return w
}

// freeze starts recording the waits' attempts and returns once n waits have
// each made a whole attempt since (sent and answered), as they do every few
// seconds: the attempts awaitAttempts counts are those sent after that, so
// none sent before the server stops answering and answered after (which
// would never be followed by another) is awaited in vain. Until then each
// wait is in its first attempts or asleep until its next.
func (w *waitsInFlight) freeze(t *testing.T, n int) {
	t.Helper()
	w.mu.Lock()
	w.frozen = true
	w.mu.Unlock()
	if !eventually(3*notifyFallback, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.settled) == n
	}) {
		w.mu.Lock()
		defer w.mu.Unlock()
		t.Fatalf("not every wait made an attempt: %v", w.settled)
	}
}

// awaitAttempts fails the test unless n waits send an attempt after freeze
// returned.
func (w *waitsInFlight) awaitAttempts(t *testing.T, n int) {
	t.Helper()
	if !eventually(3*notifyFallback, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.inFlight) == n
	}) {
		w.mu.Lock()
		defer w.mu.Unlock()
		t.Fatalf("not every wait made an attempt: %v", w.inFlight)
	}
}

// checkRunning reports every wait that has already ended.
func (w *waitsInFlight) checkRunning(t *testing.T) {
	t.Helper()
	for name, ch := range w.res {
		select {
		case err := <-ch:
			t.Errorf("%s: wait ended before Close with %v", name, err)
			ch <- err
		default:
		}
	}
}

// TestCloseEndsWaitAfterClosedConn: the attempts of waits in flight fail
// because their connection was closed under them (a read's "use of closed
// network connection"), and Redis cannot be reached since. That is a broken
// connection like any other: each wait settles its attempt and waits on,
// and it is Close, begun later, that ends the wait, with ErrClosed. Such a
// failure ended the wait at once with the transport's error (and the
// Semaphore's and PermitSemaphore's undo went to the background), so a wait
// Close was to end had already failed.
func TestCloseEndsWaitAfterClosedConn(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	var d closedConns
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{px.Addr}, DisableCache: true,
		PipelineMultiplex: -1, DialCtxFn: d.dial})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.Close)
	c := newTestClient(t, rc)
	h := newTestClient(t, node.Client(t), WithKeyPrefix(c.cfg.prefix))
	ctx := testCtx(t, 30*time.Second)

	w := startWaitsInFlight(ctx, t, h, c, "closed-conn-")
	res := w.res
	hooked := len(res) // waits whose attempts c.testHookAttempt sees
	// A LeanMutex's wait polls (every 16 ms at most): its next attempt
	// hangs as soon as the replies are held back.
	lean := mustLean(t, c, "closed-conn-LeanMutex")
	if _, err := mustLean(t, h, "closed-conn-LeanMutex").LockWithLease(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	leanRes := make(chan error, 1)
	res["LeanMutex"] = leanRes
	go func() { _, err := lean.Lock(ctx); leanRes <- err }()
	w.freeze(t, hooked)
	px.FreezeReplies()
	w.awaitAttempts(t, hooked)
	time.Sleep(100 * time.Millisecond) // the last attempts are on their way
	d.closeAll()                       // the attempts fail: use of closed network connection
	px.Refuse()                        // and Redis is out of reach from here on
	time.Sleep(500 * time.Millisecond) // the waits settle their attempts, in vain
	w.checkRunning(t)
	closed := make(chan struct{})
	go func() { defer close(closed); c.Close() }()
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
	px.Thaw()
	<-closed
}
