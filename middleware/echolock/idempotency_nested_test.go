package echolock_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
)

// TestIdempotencyNested: a route under the Idempotency middleware twice on
// one store (applied to every route with e.Use and again on the route, as
// the README shows it) runs its handler once under the outer middleware's
// claim and replays its answer. The inner middleware tried to claim the key
// the outer one held and answered 409 "in flight" to every request with a
// key, its retries included, so the handler never ran.
func TestIdempotencyNested(t *testing.T) {
	t.Parallel()
	store := plainStore(t)
	var runs atomic.Int64
	e := echo.New()
	e.Use(echolock.Idempotency(store))
	e.POST("/charges", func(c echo.Context) error {
		runs.Add(1)
		return c.String(http.StatusCreated, "charged")
	}, echolock.Idempotency(store))
	srv := serve(t, e)
	first := do(t, srv, "POST", "/charges", "b", "Idempotency-Key", "n1")
	if first.code != http.StatusCreated || first.body != "charged" {
		t.Fatalf("first: %d %q; want the handler's 201", first.code, first.body)
	}
	again := do(t, srv, "POST", "/charges", "b", "Idempotency-Key", "n1")
	if again.code != http.StatusCreated || again.body != "charged" || again.header.Get(echolock.HeaderIdempotentReplayed) != "true" || runs.Load() != 1 {
		t.Fatalf("retry: %d %q replayed=%q, handler runs %d; want the 201 replayed, one run",
			again.code, again.body, again.header.Get(echolock.HeaderIdempotentReplayed), runs.Load())
	}
}
