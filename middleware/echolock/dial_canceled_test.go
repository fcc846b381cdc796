package echolock_test

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/echolock"
)

type dialerKey struct{}

// TestFailOpenDialCanceledByOther: two requests wait for one connection to
// Redis being opened (rueidis opens it once for all of them, with the first
// one's context), and the first one's client goes away. The other, whose
// client is still there, takes its lock on the new connection: Redis is
// fine. It used to fail with the first one's "dial tcp: ... operation was
// canceled", taken for an unreachable Redis: with FailOpen the handler ran
// without its lock (503 without).
func TestFailOpenDialCanceledByOther(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	var gated atomic.Bool
	dialing := make(chan bool, 16)
	open := make(chan struct{})
	rc := node.Client(t, func(o *rueidis.ClientOption) {
		o.PipelineMultiplex = -1 // one connection
		o.DialCtxFn = func(ctx context.Context, dst string, d *net.Dialer, _ *tls.Config) (net.Conn, error) {
			if gated.Load() {
				dialing <- ctx.Value(dialerKey{}) != nil
				select { // a slow connect
				case <-ctx.Done():
				case <-open:
				}
			}
			return d.DialContext(ctx, "tcp", dst)
		}
	})
	lc, err := scriptlock.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lc.Close() })
	var out outcomes
	e := echo.New()
	e.POST("/:id", func(c echo.Context) error { return c.String(http.StatusOK, "ran") }, echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: redistest.Prefix(t), Client: lc, FailOpen: true, OnOutcome: out.report}))
	serveWith := func(ctx context.Context, id string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, http.MethodPost, "/"+id, nil))
		return rec
	}
	ctx := context.Background()
	if rec := serveWith(ctx, "warm"); rec.Code != http.StatusOK {
		t.Fatalf("first request: %d %q", rec.Code, rec.Body.String())
	}
	time.Sleep(200 * time.Millisecond) // the Client's background calls are over
	out.take()
	// The connection breaks; the next call opens a new one, slowly.
	gated.Store(true)
	node.Do(t, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
	// A write is not made again on a new connection: on one in rueidis's
	// synchronous mode it finds the old one closed; on one that pipelines (the
	// first request's Unlock queued its release) it opens a new one, which the
	// gate holds until the write's context ends. Its dial is not the one
	// watched below.
	wctx, wcancel := context.WithTimeout(ctx, 500*time.Millisecond)
	err = rc.Do(wctx, rc.B().Set().Key("{x}drop").Value("1").Build()).Error()
	wcancel()
	if err == nil {
		t.Fatal("write on a killed connection succeeded")
	}
	for drained := false; !drained; {
		select {
		case <-dialing:
		default:
			drained = true
		}
	}

	gone, leave := context.WithCancel(context.WithValue(ctx, dialerKey{}, true))
	first := make(chan struct{})
	go func() { defer close(first); serveWith(gone, "1") }()
	select {
	case marked := <-dialing:
		if !marked {
			t.Fatal("the connection is opened by another call than the first request's")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no dial started")
	}
	second := make(chan *httptest.ResponseRecorder, 1)
	go func() { second <- serveWith(ctx, "2") }()
	time.Sleep(100 * time.Millisecond) // waiting for the same connection
	leave()                            // the first client goes away, its dial with it
	<-first
	close(open)
	rec := <-second
	got := out.take()
	if rec.Code != http.StatusOK || !slices.Contains(got, scriptlock.RequestLocked) {
		t.Errorf("request whose client stays, on a reachable Redis: %d %q, outcomes %v; want 200 run under its lock (%v)",
			rec.Code, rec.Body.String(), got, scriptlock.RequestLocked)
	}
}
