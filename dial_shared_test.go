package scriptlock

import (
	"context"
	"crypto/tls"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// slowDial is a rueidis client on one connection whose opening, while
// gated, waits until open is called or the dialing call's context ends (a
// slow connect: a far or loaded network), as a real dial does.
type slowDial struct {
	rc      rueidis.Client
	gated   atomic.Bool
	dialing chan bool // whether the call opening it is the marked one
	open    chan struct{}
}

func newSlowDial(t *testing.T, node *redistest.Node) *slowDial {
	sd := &slowDial{dialing: make(chan bool, 16), open: make(chan struct{})}
	sd.rc = node.Client(t, func(o *rueidis.ClientOption) {
		o.PipelineMultiplex = -1 // one connection, which every call waits on
		o.DialCtxFn = func(ctx context.Context, dst string, d *net.Dialer, _ *tls.Config) (net.Conn, error) {
			if sd.gated.Load() {
				sd.dialing <- ctx.Value(dialerKey{}) != nil
				select {
				case <-ctx.Done():
				case <-sd.open:
				}
			}
			return d.DialContext(ctx, "tcp", dst)
		}
	})
	return sd
}

// dialerKey marks the context of the call meant to open the connection.
type dialerKey struct{}

// drop closes the connection and makes the next call open a new one,
// slowly (gated).
func (sd *slowDial) drop(t *testing.T, node *redistest.Node) {
	t.Helper()
	sd.gated.Store(true)
	node.Do(t, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
	// A write is not made again on a new connection. On a connection in
	// rueidis's synchronous mode it only finds the old one closed; on one
	// that pipelines (calls were queued on it: an Unlock's release is) the
	// connection's reader saw it close and the write opens a new one, which
	// the gate holds until the write's context ends. Either way it fails,
	// and the next call dials.
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if err := sd.rc.Do(ctx, sd.rc.B().Set().Key("{x}drop").Value("1").Build()).Error(); err == nil {
		t.Fatal("write on a killed connection succeeded")
	}
	for { // the dial it made, if any, is not the one the test watches
		select {
		case <-sd.dialing:
		default:
			return
		}
	}
}

// TestDialCanceledByOtherCall: rueidis opens a connection once for every
// call waiting on it, with the context of the first call. When that call's
// context is canceled (its caller gave up), the opening fails for all of
// them with "dial tcp: ... operation was canceled". A call whose own
// context lives is made again on a new connection: nothing was sent, and
// Redis is fine. A TryLock without a wait (the lock middleware's default)
// used to fail with the dial error, which the middleware answers 503
// (Redis unavailable), or, failing open, runs the request without its lock.
func TestDialCanceledByOtherCall(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	for _, tc := range []struct {
		name string
		call func(ctx context.Context, c *Client) error
	}{
		{"Mutex.TryLock", func(ctx context.Context, c *Client) error {
			lctx, err := mustMutex(t, c, "other").TryLock(ctx, 0)
			if err == nil {
				err = mustMutex(t, c, "other").Unlock(lctx)
			}
			return err
		}},
		{"Semaphore.TryAcquire", func(ctx context.Context, c *Client) error {
			s := mustSem(t, c, "sem")
			err := s.TryAcquire(ctx, 1, 0)
			if err == nil {
				err = s.Release(ctx, 1)
			}
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sd := newSlowDial(t, node)
			c := newTestClient(t, sd.rc)
			ctx := testCtx(t, 20*time.Second)
			if ok, err := mustSem(t, c, "sem").TrySetPermits(ctx, 1); err != nil || !ok {
				t.Fatalf("TrySetPermits: %v, %v", ok, err)
			}

			// Whatever the Client does on its first calls in the background
			// is over: the next connection is opened by the first caller.
			if lctx, err := mustMutex(t, c, "first").TryLock(ctx, 0); err != nil {
				t.Fatal(err)
			} else if err := mustMutex(t, c, "first").Unlock(lctx); err != nil {
				t.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond)
			sd.drop(t, node)

			gone, leave := context.WithCancel(context.WithValue(ctx, dialerKey{}, true))
			first := make(chan error, 1)
			go func() {
				_, err := mustMutex(t, c, "first").TryLock(gone, 0)
				first <- err
			}()
			select {
			case marked := <-sd.dialing:
				if !marked {
					t.Fatal("the connection is opened by another call than the first caller's")
				}
			case <-time.After(5 * time.Second):
				t.Fatal("no dial started")
			}
			res := make(chan error, 1)
			go func() { res <- tc.call(ctx, c) }()
			time.Sleep(100 * time.Millisecond) // waiting for the same connection
			leave()                            // the first caller gives up, and its dial with it
			<-first
			close(sd.open)
			if err := <-res; err != nil {
				t.Fatalf("call whose context lives, on a reachable Redis: %v", err)
			}
		})
	}
}

// TestDialCanceledByOtherCallNodeCall: the Client's calls to one node (the
// failover guard's replica count, INFO) wait for a connection being opened
// like any other, and fail with the opening's "operation was canceled" when
// the call that opened it gives up. They are made again as well: a count that
// failed so counted no replica, and the first acquisition on a server
// without replicas waited for one and failed with ErrNotReplicated, undone,
// though Redis was fine.
func TestDialCanceledByOtherCallNodeCall(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	sd := newSlowDial(t, node)
	c := newTestClient(t, sd.rc, WithFailoverGuard(true, 200*time.Millisecond))
	ctx := testCtx(t, 20*time.Second)
	time.Sleep(200 * time.Millisecond) // whatever the Client does at first in the background is over
	sd.drop(t, node)

	gone, leave := context.WithCancel(context.WithValue(ctx, dialerKey{}, true))
	first := make(chan error, 1)
	go func() { first <- sd.rc.Do(gone, sd.rc.B().Get().Key("{x}first").Build()).Error() }()
	select {
	case marked := <-sd.dialing:
		if !marked {
			t.Fatal("the connection is opened by another call than the first caller's")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no dial started")
	}
	res := make(chan error, 1)
	go func() {
		m := mustMutex(t, c, "counted")
		lctx, err := m.TryLock(ctx, 0)
		if err == nil {
			err = m.Unlock(lctx)
		}
		res <- err
	}()
	time.Sleep(100 * time.Millisecond) // the count waits for the same connection
	leave()                            // the first caller gives up, and its dial with it
	<-first
	close(sd.open)
	if err := <-res; err != nil {
		t.Fatalf("first guarded acquisition, on a reachable Redis without replicas: %v", err)
	}
}
