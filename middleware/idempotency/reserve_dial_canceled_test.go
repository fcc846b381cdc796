package idempotency_test

import (
	"context"
	"crypto/tls"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// TestReserveDialCanceledByOther: requests that wait for one connection to
// Redis being opened share its outcome (rueidis dials once, with the context
// of the call that started the dial). When that call's client goes away,
// the dial is canceled, and another request, whose client is still there,
// gets "operation was canceled" too: its reservation is made again on a new
// connection instead of failing at once as one that cannot be sent, which
// answered a request on a reachable Redis 503 (idempotency store
// unavailable), reported and logged as Redis down.
func TestReserveDialCanceledByOther(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	var gated atomic.Bool
	dialing := make(chan struct{}, 8)
	c := node.Client(t, func(o *rueidis.ClientOption) {
		o.PipelineMultiplex = -1 // one connection
		o.DialCtxFn = func(ctx context.Context, dst string, d *net.Dialer, _ *tls.Config) (net.Conn, error) {
			if gated.Load() {
				dialing <- struct{}{}
				<-ctx.Done() // a slow connect, until its caller gives up
				return nil, &net.OpError{Op: "dial", Net: "tcp", Err: ctx.Err()}
			}
			return d.DialContext(ctx, "tcp", dst)
		}
	})
	s, err := idempotency.NewStore(c, idempotency.WithPrefix(redistest.Prefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	ctx := context.Background()
	if r, err := s.Reserve(ctx, "acct", "warm", "fp"); err != nil || r.State != idempotency.Claimed {
		t.Fatalf("first reservation: %+v, %v", r, err)
	}
	// The connection breaks: the next call dials again.
	gated.Store(true)
	node.Do(t, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
	time.Sleep(100 * time.Millisecond)

	gone, leave := context.WithCancel(ctx)
	goneDone := make(chan error, 1)
	go func() {
		_, err := s.Reserve(gone, "acct", "k-gone", "fp")
		goneDone <- err
	}()
	select {
	case <-dialing:
	case <-time.After(5 * time.Second):
		t.Fatal("no dial started")
	}
	stays := make(chan error, 1)
	var res idempotency.Reservation
	go func() {
		var err error
		res, err = s.Reserve(ctx, "acct", "k-stays", "fp")
		stays <- err
	}()
	time.Sleep(100 * time.Millisecond) // waiting for the same connection
	gated.Store(false)
	leave() // the first client goes away, its dial with it
	<-goneDone
	if err := <-stays; err != nil || res.State != idempotency.Claimed {
		t.Fatalf("reservation of a request whose client stays: %+v, %v; want Claimed", res, err)
	}
}
