package echolock_test

//echov5gen:v4only

import (
	"net/http"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestBodyLimitChunked413V4: the v4 counterpart of v5's
// TestBodyLimitChunked413.
func TestBodyLimitChunked413V4(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	e := echo.New()
	h := func(c echo.Context) error { return c.NoContent(http.StatusNoContent) }
	e.POST("/lock", h, middleware.BodyLimit("1K"),
		echolock.LockWithConfig(echolock.LockConfig{Client: env.Locks, KeyPrefix: env.Prefix, KeyLookup: "json:id"}))
	e.POST("/idem", h, middleware.BodyLimit("1K"), echolock.Idempotency(store))
	srv := serve(t, e)
	body := `{"id":"7","pad":"` + strings.Repeat("x", 4096) + `"}`
	for _, path := range []string{"/lock", "/idem"} {
		if r := chunked(t, srv, srv.URL+path, body, "K"); r.code != http.StatusRequestEntityTooLarge {
			t.Errorf("%s: chunked body over BodyLimit: %d %q, want 413", path, r.code, r.body)
		}
	}
}

// TestHEADReplayV4: on v4 a HEAD route's answer (the body net/http
// drops is recorded) replays with its Content-Length: the contrast to v5's
// TestAutoHEADGlobalReplay.
func TestHEADReplayV4(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	e := echo.New()
	e.Use(echolock.Idempotency(store))
	e.HEAD("/exports/:id", func(c echo.Context) error { return c.String(http.StatusCreated, "export body") })
	srv := serve(t, e)
	first := do(t, srv, http.MethodHead, "/exports/1", "", echolock.HeaderIdempotencyKey, "K")
	retry := do(t, srv, http.MethodHead, "/exports/1", "", echolock.HeaderIdempotencyKey, "K")
	if first.header.Get(echo.HeaderContentLength) != "11" || retry.header.Get(echo.HeaderContentLength) != "11" ||
		retry.header.Get(echolock.HeaderIdempotentReplayed) != "true" {
		t.Errorf("first %d %v, retry %d %v: want both Content-Length 11, the retry replayed", first.code, first.header, retry.code, retry.header)
	}
}
