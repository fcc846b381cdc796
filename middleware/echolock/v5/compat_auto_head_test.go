package echolock_test

// Echo v5 only: a router made with AutoHandleHEAD serves HEAD with a GET
// route's handler, through a writer of Echo's that drops the body.

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v5"

	echolock "github.com/scriptlock/scriptlock/middleware/echolock/v5"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestAutoHandleHEAD: a HEAD that Echo v5 serves with a GET route's handler
// (RouterConfig.AutoHandleHEAD) runs under the lock and is stored and
// replayed with the GET answer's status and Content-Length, as a HEAD route
// of its own is; a GET with the same key is another request (422).
func TestAutoHandleHEAD(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	var runs atomic.Int64
	e := echo.NewWithConfig(echo.Config{Router: echo.NewRouter(echo.RouterConfig{AutoHandleHEAD: true})})
	e.GET("/exports/:id", func(c *echo.Context) error {
		runs.Add(1)
		return c.String(http.StatusCreated, "export body")
	}, echolock.Idempotency(store), echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: env.LockFunc()}))
	srv := serve(t, e)
	first := do(t, srv, http.MethodHead, "/exports/1", "", echolock.HeaderIdempotencyKey, "K")
	if first.code != http.StatusCreated || first.body != "" || first.header.Get(echo.HeaderContentLength) != "11" {
		t.Fatalf("HEAD: %d %q Content-Length %q, want 201, no body, 11", first.code, first.body, first.header.Get(echo.HeaderContentLength))
	}
	retry := do(t, srv, http.MethodHead, "/exports/1", "", echolock.HeaderIdempotencyKey, "K")
	if retry.code != http.StatusCreated || retry.header.Get(echo.HeaderContentLength) != "11" ||
		retry.header.Get(echolock.HeaderIdempotentReplayed) != "true" || runs.Load() != 1 {
		t.Errorf("HEAD retry: %d Content-Length %q replayed %q after %d runs, want the 201 replayed",
			retry.code, retry.header.Get(echo.HeaderContentLength), retry.header.Get(echolock.HeaderIdempotentReplayed), runs.Load())
	}
	if r := do(t, srv, http.MethodGet, "/exports/1", "", echolock.HeaderIdempotencyKey, "K"); r.code != http.StatusUnprocessableEntity || runs.Load() != 1 {
		t.Errorf("GET with the HEAD's key: %d %q after %d runs, want 422", r.code, r.body, runs.Load())
	}
}
