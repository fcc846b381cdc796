package echolock_test

// Cases of Echo v5 alone (its AutoHandleHEAD, its Gzip writer, its
// BodyLimit error): hand-written, not generated.

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v5"
	"github.com/labstack/echo/v5/middleware"

	echolock "github.com/scriptlock/scriptlock/middleware/echolock/v5"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestAutoHEADGlobalReplay: Idempotency in e.Use (the usual place)
// with a router that serves HEAD with the GET handler. The first HEAD
// answers 201 with Content-Length 11 (Echo's headResponseWriter computes it
// below c.Response(), under the recorder's feet); the replay must be the
// same answer.
func TestAutoHEADGlobalReplay(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	var runs atomic.Int64
	e := echo.NewWithConfig(echo.Config{Router: echo.NewRouter(echo.RouterConfig{AutoHandleHEAD: true})})
	e.Use(echolock.Idempotency(store))
	e.GET("/exports/:id", func(c *echo.Context) error {
		runs.Add(1)
		return c.String(http.StatusCreated, "export body")
	})
	srv := serve(t, e)
	first := do(t, srv, http.MethodHead, "/exports/1", "", echolock.HeaderIdempotencyKey, "K")
	if first.code != http.StatusCreated || first.header.Get(echo.HeaderContentLength) != "11" {
		t.Fatalf("HEAD: %d Content-Length %q, want 201, 11", first.code, first.header.Get(echo.HeaderContentLength))
	}
	retry := do(t, srv, http.MethodHead, "/exports/1", "", echolock.HeaderIdempotencyKey, "K")
	t.Logf("first: %d %v; retry: %d %v", first.code, first.header, retry.code, retry.header)
	if retry.code != first.code || retry.header.Get(echo.HeaderContentLength) != first.header.Get(echo.HeaderContentLength) ||
		retry.header.Get(echo.HeaderContentType) != first.header.Get(echo.HeaderContentType) || runs.Load() != 1 {
		t.Errorf("HEAD retry: %d Content-Length %q Content-Type %q after %d runs, want the first answer (%d, %q, %q) replayed",
			retry.code, retry.header.Get(echo.HeaderContentLength), retry.header.Get(echo.HeaderContentType), runs.Load(),
			first.code, first.header.Get(echo.HeaderContentLength), first.header.Get(echo.HeaderContentType))
	}
}

// TestGzipBufferedErrorAnsweredOnce: Gzip (with a MinLength) in front,
// then Echo's RequestLogger with HandleError, then Idempotency. The handler
// returns a stored error (404): Idempotency answers it through its own
// echo.Response put on top of Gzip's writer, which buffers it; the error
// handler the logger calls sees Echo's response uncommitted and answers a
// second time. Without Idempotency, and on v4, the client gets one body.
func TestGzipBufferedErrorAnsweredOnce(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	for _, withIdem := range []bool{false, true} {
		e := echo.New()
		e.Use(middleware.GzipWithConfig(middleware.GzipConfig{MinLength: 1024}))
		e.Use(middleware.RequestLoggerWithConfig(middleware.RequestLoggerConfig{
			HandleError: true, LogStatus: true,
			LogValuesFunc: func(*echo.Context, middleware.RequestLoggerValues) error { return nil },
		}))
		if withIdem {
			e.Use(echolock.Idempotency(store))
		}
		e.POST("/orders/:id", func(c *echo.Context) error {
			return echo.NewHTTPError(http.StatusNotFound, "no such order")
		})
		srv := serve(t, e)
		r := do(t, srv, http.MethodPost, "/orders/1", "{}", echolock.HeaderIdempotencyKey, "K", "Accept-Encoding", "gzip", echo.HeaderContentType, "application/json")
		if r.code != http.StatusNotFound || strings.Count(r.body, "no such order") != 1 {
			t.Errorf("Idempotency %v: %d %q, want one 404 body", withIdem, r.code, r.body)
		}
	}
}

// TestAutoHEADPanicNotStored: a HEAD served by a GET handler
// (AutoHandleHEAD) that panics after writing its status: Echo's
// headResponseWriter holds the status back (nothing reaches the recorder
// or the client) but marks Echo's response Committed. Documented: "A panic.
// Before an answer was sent, the key is released so a retry runs."
func TestAutoHEADPanicNotStored(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	var runs atomic.Int64
	e := echo.NewWithConfig(echo.Config{Router: echo.NewRouter(echo.RouterConfig{AutoHandleHEAD: true})})
	e.Use(middleware.Recover(), echolock.Idempotency(store))
	e.GET("/exports/:id", func(c *echo.Context) error {
		if runs.Add(1) == 1 {
			c.Response().WriteHeader(http.StatusCreated)
			panic("export failed")
		}
		return c.String(http.StatusCreated, "export body")
	})
	srv := serve(t, e)
	first := do(t, srv, http.MethodHead, "/exports/1", "", echolock.HeaderIdempotencyKey, "K")
	retry := do(t, srv, http.MethodHead, "/exports/1", "", echolock.HeaderIdempotencyKey, "K")
	t.Logf("first: %d %v; retry: %d %v", first.code, first.header, retry.code, retry.header)
	if runs.Load() != 2 || retry.header.Get(echolock.HeaderIdempotentReplayed) != "" {
		t.Errorf("after a panic that sent nothing: retry %d replayed %q after %d runs, want the handler run again",
			retry.code, retry.header.Get(echolock.HeaderIdempotentReplayed), runs.Load())
	}
}

// TestBodyLimitChunked413: a chunked body over Echo v5's BodyLimit in
// front: its reader fails with echo.ErrStatusRequestEntityTooLarge, which on
// v5 is not an *echo.HTTPError. Documented (LockConfig, IdempotencyConfig,
// TestFormKeyBodyTooLarge's doc): a body over an enclosing BodyLimit answers
// 413, as on v4.
func TestBodyLimitChunked413(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	e := echo.New()
	h := func(c *echo.Context) error { return c.NoContent(http.StatusNoContent) }
	e.POST("/lock", h, middleware.BodyLimit(1024),
		echolock.LockWithConfig(echolock.LockConfig{Client: env.Locks, KeyPrefix: env.Prefix, KeyLookup: "json:id"}))
	e.POST("/idem", h, middleware.BodyLimit(1024), echolock.Idempotency(store))
	srv := serve(t, e)
	body := `{"id":"7","pad":"` + strings.Repeat("x", 4096) + `"}`
	for _, path := range []string{"/lock", "/idem"} {
		if r := chunked(t, srv, srv.URL+path, body, "K"); r.code != http.StatusRequestEntityTooLarge {
			t.Errorf("%s: chunked body over BodyLimit: %d %q, want 413", path, r.code, r.body)
		}
	}
}
