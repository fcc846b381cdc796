package echolock_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotencyDeadlineAnsweredFurtherOut: a handler stopped by a
// server-side request deadline (Echo's ContextTimeout, further out) is
// answered by the middleware that set the deadline, 503, as a request
// without a key is; the Idempotency middleware answered it itself first,
// with Echo's 500 for a bare error. Nothing is stored: the retry runs.
func TestIdempotencyDeadlineAnsweredFurtherOut(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	var runs atomic.Int64
	// A deadline a loaded machine's reservation and release fit in: one
	// that ran out first answered 503 without running the handler.
	deadline := middleware.ContextTimeout(time.Second)
	e := echo.New()
	e.POST("/charges", func(c echo.Context) error {
		runs.Add(1)
		<-c.Request().Context().Done()
		return c.Request().Context().Err()
	}, deadline, echolock.Idempotency(store))
	srv := serve(t, e)
	if r := do(t, srv, "POST", "/charges", ""); r.code != http.StatusServiceUnavailable {
		t.Fatalf("without a key: %d, want ContextTimeout's 503", r.code)
	}
	for i := range 2 {
		if r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "k"); r.code != http.StatusServiceUnavailable {
			t.Errorf("with a key, call %d: %d %q, want ContextTimeout's 503", i+1, r.code, r.body)
		}
	}
	if n := runs.Load(); n != 3 {
		t.Errorf("handler ran %d times, want 3 (the key released after the deadline)", n)
	}
}
