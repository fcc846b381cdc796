package echolock_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/echolock"
)

// TestFrozenRedisWaitUnavailable: a Redis that stops answering (a frozen
// server, a stalled link) while a request waits for its free lock is Redis
// unavailable, as it is for a request that makes a single attempt: 503 with
// Retry-After (the handler runs with FailOpen), not 409, which would tell
// the client that another request holds the lock.
func TestFrozenRedisWaitUnavailable(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	lc, err := scriptlock.New(px.Client(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lc.Close() })
	prefix := redistest.Prefix(t)
	var runs atomic.Int64
	h := func(c echo.Context) error {
		runs.Add(1)
		return c.NoContent(http.StatusNoContent)
	}
	e := echo.New()
	e.POST("/closed/:id", h, echolock.LockWithConfig(echolock.LockConfig{Client: lc, KeyPrefix: prefix, Wait: time.Second}))
	e.POST("/open/:id", h, echolock.LockWithConfig(echolock.LockConfig{Client: lc, KeyPrefix: prefix, Wait: time.Second, FailOpen: true}))
	px.Freeze()
	t.Cleanup(px.Thaw)

	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest("POST", "/closed/1", nil))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "1" || runs.Load() != 0 {
		t.Errorf("waiting request, Redis frozen: %d Retry-After %q, handler runs %d; want 503 Retry-After 1, no run",
			rec.Code, rec.Header().Get("Retry-After"), runs.Load())
	}
	rec = httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest("POST", "/open/2", nil))
	if rec.Code != http.StatusNoContent || runs.Load() != 1 {
		t.Errorf("waiting request, Redis frozen, FailOpen: %d, handler runs %d; want the handler's 204", rec.Code, runs.Load())
	}
}
