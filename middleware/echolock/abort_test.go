package echolock_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// A handler proxies its answer (httputil.ReverseProxy, Echo's Proxy
// middleware); the upstream drops its connection mid-body, so the proxy
// aborts the answer with panic(http.ErrAbortHandler), which Echo's Recover
// passes on to net/http. The client got a cut-off answer: a retry with the
// same Idempotency-Key must not get the part that was sent replayed as a
// complete 200. It gets 409, as after a handler error once the answer began.
func TestIdempotencyAbortedAnswerNotReplayed(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	var upstreamRuns atomic.Int64
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upstreamRuns.Add(1)
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\nfirst part")
		_ = buf.Flush()
		_ = conn.Close()
	}))
	t.Cleanup(upstream.Close)
	u, _ := url.Parse(upstream.URL)
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.ErrorLog = nil

	e := echo.New()
	e.Use(middleware.Recover())
	e.POST("/export", func(c echo.Context) error {
		proxy.ServeHTTP(c.Response(), c.Request())
		return nil
	}, echolock.Idempotency(store))
	srv := serve(t, e)

	req, _ := http.NewRequest("POST", srv.URL+"/export", nil)
	req.Header.Set("Idempotency-Key", "K")
	if resp, err := srv.Client().Do(req); err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil {
			t.Fatalf("first request: %d, a complete answer; want it aborted", resp.StatusCode)
		}
	}
	r := do(t, srv, "POST", "/export", "", "Idempotency-Key", "K")
	if r.code != http.StatusConflict || r.header.Get(echolock.HeaderIdempotentReplayed) != "" {
		t.Errorf("retry after an aborted answer: %d %q (replayed %q), want 409", r.code, r.body, r.header.Get(echolock.HeaderIdempotentReplayed))
	}
	if n := upstreamRuns.Load(); n != 1 {
		t.Errorf("the request ran %d times", n)
	}
}
