package echolock_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
)

// TestIdempotencyEchoPredefinedError: a handler returning one of Echo's
// predefined errors (echo.ErrNotFound: an *echo.HTTPError in Echo v4, a
// type of its own carrying the status in v5) chose its status as Echo's
// error handler reads it: the 404 is answered inside, stored and replayed,
// and the handler runs once.
func TestIdempotencyEchoPredefinedError(t *testing.T) {
	t.Parallel()
	var runs atomic.Int64
	srv, _ := idemServer(t, echolock.IdempotencyConfig{}, func(c echo.Context) error {
		runs.Add(1)
		return echo.ErrNotFound
	})
	first := do(t, srv, "POST", "/charges/7", "b", "Idempotency-Key", "K")
	if first.code != http.StatusNotFound {
		t.Fatalf("first: %d %q, want 404", first.code, first.body)
	}
	retry := do(t, srv, "POST", "/charges/7", "b", "Idempotency-Key", "K")
	if retry.code != http.StatusNotFound || retry.body != first.body ||
		retry.header.Get(echolock.HeaderIdempotentReplayed) != "true" || runs.Load() != 1 {
		t.Errorf("retry: %d %q replayed %q after %d runs, want the 404 %q replayed",
			retry.code, retry.body, retry.header.Get(echolock.HeaderIdempotentReplayed), runs.Load(), first.body)
	}
}
