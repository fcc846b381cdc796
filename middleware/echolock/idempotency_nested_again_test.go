package echolock_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
)

// TestIdempotencyNestedCalledAgain: a middleware further out that calls the
// rest of the chain again on the same echo.Context (a retry of the handler)
// finds the key claimed again, or its answer stored: the claim of the first
// call, released or completed, does not let the second run without one.
func TestIdempotencyNestedCalledAgain(t *testing.T) {
	t.Parallel()
	store := plainStore(t)
	var runs atomic.Int64
	e := echo.New()
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if err := next(c); err != nil {
				return err
			}
			// Again, as a retrying middleware would: the answer was
			// stored, so the middleware replays it (to a writer that
			// has sent it, so the status is kept aside).
			w := echolock.RawWriter(echolock.EchoResponse(c))
			echolock.SetRawWriter(echolock.EchoResponse(c), httptest.NewRecorder())
			echolock.EchoResponse(c).Committed = false
			defer echolock.SetRawWriter(echolock.EchoResponse(c), w)
			return next(c)
		}
	})
	e.POST("/charges", func(c echo.Context) error {
		runs.Add(1)
		return c.String(http.StatusCreated, "charged")
	}, echolock.Idempotency(store))
	srv := serve(t, e)
	first := do(t, srv, "POST", "/charges", "b", "Idempotency-Key", "n1")
	if first.code != http.StatusCreated || runs.Load() != 1 {
		t.Fatalf("first: %d %q, handler runs %d; want the handler's 201 and one run (the second call replays)", first.code, first.body, runs.Load())
	}
}
