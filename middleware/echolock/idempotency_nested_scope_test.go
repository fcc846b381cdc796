package echolock_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
)

// TestIdempotencyNestedOtherScope: an inner Idempotency middleware on the
// same store but with a scope of its own (the tenant, where the outer one
// scopes by credentials) keeps its own records: a retry whose credentials
// changed is a new request to the outer middleware but the same one to the
// inner, which replays the answer instead of running the handler again.
func TestIdempotencyNestedOtherScope(t *testing.T) {
	t.Parallel()
	store := plainStore(t)
	inner, err := echolock.IdempotencyConfig{Store: store, Scope: func(c echo.Context) string {
		return c.Request().Header.Get("X-Tenant")
	}}.ToMiddleware()
	if err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int64
	e := echo.New()
	e.Use(echolock.Idempotency(store))
	e.POST("/charges", func(c echo.Context) error {
		runs.Add(1)
		return c.String(http.StatusCreated, "charged")
	}, inner)
	srv := serve(t, e)
	first := do(t, srv, "POST", "/charges", "b", "Idempotency-Key", "n1", "X-Tenant", "t1", "Authorization", "Bearer old")
	if first.code != http.StatusCreated || runs.Load() != 1 {
		t.Fatalf("first: %d %q, handler runs %d; want the handler's 201", first.code, first.body, runs.Load())
	}
	again := do(t, srv, "POST", "/charges", "b", "Idempotency-Key", "n1", "X-Tenant", "t1", "Authorization", "Bearer rotated")
	if again.code != http.StatusCreated || again.header.Get(echolock.HeaderIdempotentReplayed) != "true" || runs.Load() != 1 {
		t.Fatalf("retry with new credentials: %d %q replayed=%q, handler runs %d; want the inner middleware's replay, one run",
			again.code, again.body, again.header.Get(echolock.HeaderIdempotentReplayed), runs.Load())
	}
}

// TestIdempotencyNestedOwnBodyLimit: an inner Idempotency middleware that
// runs the request under the outer one's claim still refuses a body over its
// own MaxBodyBytes (413), as it does alone.
func TestIdempotencyNestedOwnBodyLimit(t *testing.T) {
	t.Parallel()
	store := plainStore(t)
	inner, err := echolock.IdempotencyConfig{Store: store, MaxBodyBytes: 8}.ToMiddleware()
	if err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int64
	e := echo.New()
	e.Use(echolock.Idempotency(store))
	e.POST("/charges", func(c echo.Context) error {
		runs.Add(1)
		return c.String(http.StatusCreated, "charged")
	}, inner)
	srv := serve(t, e)
	r := do(t, srv, "POST", "/charges", "a body over eight bytes", "Idempotency-Key", "n1")
	if r.code != http.StatusRequestEntityTooLarge || runs.Load() != 0 {
		t.Fatalf("%d %q, handler runs %d; want 413 from the inner middleware's limit, no run", r.code, r.body, runs.Load())
	}
}
