package echolock_test

import (
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
)

// TestIdempotencyReplayKeepsStatusHeaders: a stored answer whose status
// requires a header (RFC 9110: Allow in a 405, WWW-Authenticate in a 401) is
// replayed with it, as the first answer carried it; by default only
// representation headers, Location, validators and Cache-Control were
// stored, so a replayed 405 came without Allow and a replayed 401 without
// its challenge.
func TestIdempotencyReplayKeepsStatusHeaders(t *testing.T) {
	t.Parallel()
	store := plainStore(t)
	e := echo.New()
	e.Use(echolock.Idempotency(store))
	e.GET("/charges", func(c echo.Context) error { return c.String(http.StatusOK, "list") })
	e.POST("/refunds", func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="refunds", error="insufficient_scope"`)
		return c.String(http.StatusUnauthorized, "refunds need another scope")
	})
	srv := serve(t, e)
	for _, tc := range []struct{ path, header string }{{"/charges", echo.HeaderAllow}, {"/refunds", echo.HeaderWWWAuthenticate}} {
		first := do(t, srv, "POST", tc.path, "b", "Idempotency-Key", "k"+tc.path)
		again := do(t, srv, "POST", tc.path, "b", "Idempotency-Key", "k"+tc.path)
		if first.header.Get(tc.header) == "" {
			t.Fatalf("%s first: %d without %s", tc.path, first.code, tc.header)
		}
		if again.header.Get(echolock.HeaderIdempotentReplayed) != "true" || again.code != first.code || again.body != first.body ||
			again.header.Get(tc.header) != first.header.Get(tc.header) {
			t.Errorf("%s replay: %d %s %q (replayed %q); want %d with %s %q as first answered",
				tc.path, again.code, tc.header, again.header.Get(tc.header), again.header.Get(echolock.HeaderIdempotentReplayed),
				first.code, tc.header, first.header.Get(tc.header))
		}
	}
}
