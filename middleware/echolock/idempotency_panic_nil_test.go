package echolock_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotencyPanicNilUnderPanicNil: under GODEBUG=panicnil=1, where
// recover returns nil for panic(nil), a handler's panic(nil) goes on through
// the Idempotency middleware, as any other panic does, so that a recovery
// middleware further out that tells a panic from a return answers it; the
// key is released, so the retry runs. The middleware took it for no panic
// and stopped it: the request returned as if answered, and the client got
// an empty 200.
func TestIdempotencyPanicNilUnderPanicNil(t *testing.T) {
	// Not parallel: GODEBUG is the process's.
	t.Setenv("GODEBUG", "panicnil=1")
	env := mwtest.New(t)
	store := env.Store(t)
	var runs atomic.Int64
	e := echo.New()
	// Only a panic leaves ran false; a Goexit would not come back.
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) (err error) {
			ran := false
			func() {
				defer func() { _ = recover() }()
				err = next(c)
				ran = true
			}()
			if !ran {
				return c.String(http.StatusInternalServerError, "panic recovered")
			}
			return err
		}
	})
	e.POST("/charges", func(c echo.Context) error {
		if runs.Add(1) == 1 {
			panic(nil)
		}
		return c.String(http.StatusCreated, "charged")
	}, echolock.Idempotency(store))
	srv := serve(t, e)
	if r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K"); r.code != http.StatusInternalServerError || r.body != "panic recovered" {
		t.Fatalf("handler that panicked with nil: %d %q; want the recovery's 500 \"panic recovered\", as without the middleware", r.code, r.body)
	}
	if r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K"); r.code != http.StatusCreated || runs.Load() != 2 {
		t.Fatalf("retry after the panic: %d %q (runs %d), want it to run", r.code, r.body, runs.Load())
	}
}
