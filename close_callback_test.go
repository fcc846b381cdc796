package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// closeHang is how long a Close called from a callback, and the Close a test
// makes after it, may take before the test calls it a deadlock.
const closeHang = 5 * time.Second

// closingObserver calls its Client's Close from one Observer callback, once:
// the first whose event do accepts. Close is the Client's own and
// returned is closed once that Close has returned.
type closingObserver struct {
	*pairing
	at       string // "AcquireEnd", "ReleaseEnd", "HoldEnd", "Renewal" or "Guard"
	do       func(e any) bool
	c        *Client     // set before the first lock
	once     atomic.Bool // taken by the callback that closes: another is not held up
	returned chan struct{}
}

func newClosingObserver(at string, do func(e any) bool) *closingObserver {
	if do == nil {
		do = func(any) bool { return true }
	}
	return &closingObserver{pairing: newPairing(), at: at, do: do, returned: make(chan struct{})}
}

func (o *closingObserver) maybeClose(at string, e any) {
	if at != o.at || !o.do(e) {
		return
	}
	if o.once.CompareAndSwap(false, true) {
		o.c.Close()
		close(o.returned)
	}
}

func (o *closingObserver) AcquireEnd(ctx context.Context, op Op, e AcquireEvent) {
	o.pairing.AcquireEnd(ctx, op, e)
	o.maybeClose("AcquireEnd", e)
}

func (o *closingObserver) ReleaseEnd(ctx context.Context, op Op, e ReleaseEvent) {
	o.pairing.ReleaseEnd(ctx, op, e)
	o.maybeClose("ReleaseEnd", e)
}

func (o *closingObserver) HoldEnd(ctx context.Context, op Op, e HoldEvent) {
	o.pairing.HoldEnd(ctx, op, e)
	o.maybeClose("HoldEnd", e)
}

func (o *closingObserver) Renewal(e RenewalEvent) {
	o.pairing.Renewal(e)
	o.maybeClose("Renewal", e)
}

func (o *closingObserver) Guard(e GuardEvent) {
	o.pairing.Guard(e)
	o.maybeClose("Guard", e)
}

// newClosingClient returns a Client on node reporting to o. The test's
// cleanup closes it without waiting for more than closeHang: a Close that
// deadlocked must fail the test, not hang the binary.
func newClosingClient(t *testing.T, node *redistest.Node, o *closingObserver, opts ...Option) *Client {
	t.Helper()
	c, err := New(node.Client(t), append([]Option{sharedPrefix(t), WithObserver(o)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	o.c = c
	t.Cleanup(func() {
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.Close()
		}()
		select {
		case <-done:
		case <-time.After(closeHang):
			t.Errorf("cleanup: Close still blocked after %s:\n%s", closeHang, closeBlocked(c))
		}
	})
	return c
}

// awaitCallbackClose waits for the Close o made from its callback to return.
func (o *closingObserver) awaitCallbackClose(t *testing.T) {
	t.Helper()
	select {
	case <-o.returned:
	case <-time.After(closeHang):
		t.Fatalf("Close called from %s did not return within %s (deadlock):\n%s", o.at, closeHang, closeBlocked(o.c))
	}
}

// closeAndCheck closes c from the test, as a service's shutdown would after
// the callback's Close: it must return once everything has stopped, after
// which nothing is reported; then every call reported started has ended.
func (o *closingObserver) closeAndCheck(t *testing.T, c *Client) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Close()
		o.mu.Lock()
		o.closed = true
		o.mu.Unlock()
	}()
	select {
	case <-done:
	case <-time.After(closeHang):
		t.Fatalf("Close after the one called from %s did not return within %s:\n%s", o.at, closeHang, closeBlocked(c))
	}
	time.Sleep(100 * time.Millisecond) // for any event that would come late
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, what := range o.open {
		t.Errorf("%s: started, never ended", what)
	}
	for _, s := range o.problems {
		t.Error(s)
	}
}

// closeBlocked names, for each goroutine inside c's Close, the line of
// client.go it is blocked at and what it waits in, so that a deadlock says
// which of Close's waits hung.
func closeBlocked(c *Client) string {
	self := fmt.Sprintf("scriptlock.(*Client).Close(%p)", c)
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	src, _ := os.ReadFile("client.go")
	lines := strings.Split(string(src), "\n")
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		frames := strings.Split(g, "\n")
		state := frames[0]
		if i, j := strings.IndexByte(state, '['), strings.IndexByte(state, ']'); i >= 0 && j > i {
			state = state[i+1 : j]
		}
		for i := 1; i+1 < len(frames); i++ {
			if !strings.Contains(frames[i], self) {
				continue
			}
			at := strings.Fields(strings.TrimSpace(frames[i+1]))[0] // /path/client.go:NNN
			text := ""
			if n, err := strconv.Atoi(at[strings.LastIndexByte(at, ':')+1:]); err == nil && n <= len(lines) {
				text = strings.TrimSpace(lines[n-1])
			}
			out = append(out, fmt.Sprintf("  Close blocked at client.go:%s %q [%s]", at[strings.LastIndexByte(at, ':')+1:], text, state))
			break // the innermost Close of this goroutine
		}
	}
	if len(out) == 0 {
		return "  (no goroutine in Close)"
	}
	return strings.Join(out, "\n")
}

// A service that shuts its lock client down when a hold ends without its
// Unlock (fail fast) calls Close from HoldEnd. A hold whose explicit lease
// runs out is ended by its loss timer, whose run Close waits for: Close from
// there returns, and the close completes: the other holds end with
// ErrClosed and a later Close waits for all of it.
func TestCloseFromHoldEndOfLossTimer(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	o := newClosingObserver("HoldEnd", func(e any) bool { return e.(HoldEvent).Cause == EndExpired })
	c := newClosingClient(t, node, o)
	ctx := testCtx(t, 20*time.Second)
	other, err := mustMutex(t, c, "close-from-loss-timer-other").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mustMutex(t, c, "close-from-loss-timer").LockWithLease(ctx, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	o.awaitCallbackClose(t)
	// Close has begun by the time it returns, even from a callback.
	if _, err := mustMutex(t, c, "close-from-loss-timer-late").Lock(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Lock after Close returned: %v, want ErrClosed", err)
	}
	o.closeAndCheck(t, c)
	if !errors.Is(context.Cause(other), ErrClosed) {
		t.Errorf("the other hold's context: cause %v, want ErrClosed", context.Cause(other))
	}
}

// Close from the watchdog's Renewal, which runs on the watchdog's goroutine,
// which Close stops and waits for.
func TestCloseFromRenewal(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	o := newClosingObserver("Renewal", nil)
	c := newClosingClient(t, node, o, WithWatchdog(time.Second, 100*time.Millisecond))
	lctx, err := mustMutex(t, c, "close-from-renewal").Lock(testCtx(t, 20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	o.awaitCallbackClose(t)
	o.closeAndCheck(t, c)
	if !errors.Is(context.Cause(lctx), ErrClosed) {
		t.Errorf("hold's context: cause %v, want ErrClosed", context.Cause(lctx))
	}
}

// Close from the HoldEnd of a hold the watchdog found gone on the server:
// reported on the watchdog's goroutine.
func TestCloseFromHoldEndOfLostHold(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	o := newClosingObserver("HoldEnd", func(e any) bool { return e.(HoldEvent).Cause == EndLost })
	c := newClosingClient(t, node, o, WithWatchdog(time.Second, 100*time.Millisecond))
	ctx := testCtx(t, 20*time.Second)
	m := mustMutex(t, c, "close-from-lost")
	lctx, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	other, err := mustMutex(t, c, "close-from-lost-other").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	node.Do(t, "DEL", m.Key())
	o.awaitCallbackClose(t)
	o.closeAndCheck(t, c)
	if !errors.Is(context.Cause(lctx), ErrLockLost) {
		t.Errorf("lost hold's context: cause %v, want ErrLockLost", context.Cause(lctx))
	}
	if !errors.Is(context.Cause(other), ErrClosed) {
		t.Errorf("the other hold's context: cause %v, want ErrClosed", context.Cause(other))
	}
}

// Close from the callbacks that report a caller's own Lock and Unlock, which
// run inside the acquisition or release Close waits for.
func TestCloseFromAcquireAndReleaseEnd(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	t.Run("AcquireEnd", func(t *testing.T) {
		o := newClosingObserver("AcquireEnd", nil)
		c := newClosingClient(t, node, o)
		type result struct {
			ctx context.Context
			err error
		}
		locked := make(chan result, 1)
		go func() {
			lctx, err := mustMutex(t, c, "close-from-acquire-end").Lock(testCtx(t, 20*time.Second))
			locked <- result{lctx, err}
		}()
		o.awaitCallbackClose(t)
		r := <-locked
		lctx, err := r.ctx, r.err
		if err != nil {
			t.Fatal(err)
		}
		o.closeAndCheck(t, c)
		if !errors.Is(context.Cause(lctx), ErrClosed) {
			t.Errorf("hold's context: cause %v, want ErrClosed", context.Cause(lctx))
		}
	})
	t.Run("ReleaseEnd", func(t *testing.T) {
		o := newClosingObserver("ReleaseEnd", nil)
		c := newClosingClient(t, node, o)
		ctx := testCtx(t, 20*time.Second)
		m := mustMutex(t, c, "close-from-release-end")
		lctx, err := m.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		unlocked := make(chan error, 1)
		go func() { unlocked <- m.Unlock(lctx) }()
		o.awaitCallbackClose(t)
		if err := <-unlocked; err != nil {
			t.Errorf("Unlock: %v", err)
		}
		o.closeAndCheck(t, c)
	})
}

// A HoldEnd that closes the Client on any hold end also runs for the holds
// Close itself ends (EndClosed), on Close's goroutine: that Close, called
// within Close, returns, and so does the first.
func TestCloseFromHoldEndDuringClose(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	o := newClosingObserver("HoldEnd", nil)
	c := newClosingClient(t, node, o)
	ctx := testCtx(t, 20*time.Second)
	for _, name := range []string{"close-in-close-1", "close-in-close-2"} {
		if _, err := mustMutex(t, c, name).Lock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	o.closeAndCheck(t, c)
	o.awaitCallbackClose(t)
}

// A callback calls Close while a Close made elsewhere is under way and
// waiting for the callback's goroutine: each returns.
func TestCloseFromRenewalDuringClose(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	entered := make(chan struct{})
	var c *Client
	o := newClosingObserver("Renewal", func(any) bool {
		select {
		case <-entered:
		default:
			close(entered)
		}
		for !c.closed() {
			time.Sleep(time.Millisecond)
		}
		return true
	})
	c = newClosingClient(t, node, o, WithWatchdog(time.Second, 100*time.Millisecond))
	if _, err := mustMutex(t, c, "close-from-renewal-during-close").Lock(testCtx(t, 20*time.Second)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-entered:
	case <-time.After(closeHang):
		t.Fatal("no Renewal")
	}
	o.closeAndCheck(t, c)
	o.awaitCallbackClose(t)
}

// Close from Guard, which an acquisition reports while it holds a grant it
// has yet to register: the grant arrives after Close began and is given
// back, and Lock fails with ErrClosed.
func TestCloseFromGuard(t *testing.T) {
	t.Parallel()
	primary, _ := redistest.Replicated(t)
	o := newClosingObserver("Guard", nil)
	c := newClosingClient(t, primary, o, WithFailoverGuard(true, time.Second))
	m := mustMutex(t, c, "close-from-guard")
	locked := make(chan error, 1)
	go func() {
		_, err := m.Lock(testCtx(t, 20*time.Second))
		locked <- err
	}()
	o.awaitCallbackClose(t)
	if err := <-locked; !errors.Is(err, ErrClosed) {
		t.Errorf("Lock: %v, want ErrClosed", err)
	}
	o.closeAndCheck(t, c)
	if n, err := primary.Do(t, "EXISTS", m.Key()).AsInt64(); err != nil || n != 0 {
		t.Errorf("EXISTS %s after Close: %d %v, want the grant given back", m.Key(), n, err)
	}
}

// A function the program ties to a lock's context with context.AfterFunc
// runs on a goroutine of its own, not the engine's: Close from there is an
// ordinary Close and returns once the Client is closed.
func TestCloseFromLockContextAfterFunc(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	o := newClosingObserver("context.AfterFunc", nil) // no callback of that name: only the AfterFunc closes
	c := newClosingClient(t, node, o)
	ctx := testCtx(t, 20*time.Second)
	other, err := mustMutex(t, c, "close-from-afterfunc-other").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lctx, err := mustMutex(t, c, "close-from-afterfunc").LockWithLease(ctx, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	context.AfterFunc(lctx, func() {
		c.Close()
		o.mu.Lock()
		o.closed = true
		o.mu.Unlock()
		close(o.returned)
	})
	o.awaitCallbackClose(t)
	// This Close waited: the other hold has ended already.
	if !errors.Is(context.Cause(other), ErrClosed) {
		t.Errorf("the other hold's context once Close returned: cause %v, want ErrClosed", context.Cause(other))
	}
	o.closeAndCheck(t, c)
}

// The close a callback's Close leaves to the Client completes on a goroutine
// of the Client's: once a Close called elsewhere has returned, none of the
// Client's goroutines is left. Not parallel: goleak sees every goroutine of
// the process.
func TestCloseFromCallbackLeavesNoGoroutine(t *testing.T) {
	node := redistest.Server(t)
	rc := node.Client(t)
	ctx := testCtx(t, 20*time.Second)
	if err := rc.Do(ctx, rc.B().Ping().Build()).Error(); err != nil {
		t.Fatal(err)
	}
	before := goleak.IgnoreCurrent()
	o := newClosingObserver("HoldEnd", func(e any) bool { return e.(HoldEvent).Cause == EndExpired })
	c, err := New(rc, sharedPrefix(t), WithObserver(o))
	if err != nil {
		t.Fatal(err)
	}
	o.c = c
	if _, err := mustMutex(t, c, "leak-other").Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := mustMutex(t, c, "leak").LockWithLease(ctx, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	o.awaitCallbackClose(t)
	o.closeAndCheck(t, c)
	goleak.VerifyNone(t, before, redistest.IgnoreReaper())
}

// A Close called from the program, directly, through a method value or as
// an io.Closer, is no callback's: it returns once the Client is closed.
func TestCloseOutsideCallbacksWaits(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	for name, closeIt := range map[string]func(c *Client){
		"direct":       func(c *Client) { c.Close() },
		"method value": func(c *Client) { f := c.Close; f() },
		"io.Closer":    func(c *Client) { var cl io.Closer = c; cl.Close() },
		"deferred":     func(c *Client) { defer c.Close() },
	} {
		c := newTestClient(t, node.Client(t))
		if _, err := mustMutex(t, c, "outside-"+name).Lock(testCtx(t, 10*time.Second)); err != nil {
			t.Fatal(err)
		}
		closeIt(c)
		select {
		case <-c.closeDone:
		default:
			t.Errorf("%s: Close returned before the Client was closed", name)
		}
	}
}
