package echolock_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotencyCalledAgainBodyRead: a middleware further out that calls
// the rest of the chain again on the same echo.Context (a retry of the
// handler) after the handler read the body finds the body again: the
// second pass is fingerprinted as the first and replays its answer. The
// body the first pass handed the handler was left read, so the second pass
// was refused with 500 and logged as a body a middleware in front had read.
func TestIdempotencyCalledAgainBodyRead(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	var runs atomic.Int64
	var second *httptest.ResponseRecorder
	var secondErr error
	e := echo.New()
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if err := next(c); err != nil {
				return err
			}
			// Again, as a retrying middleware would, its answer kept aside.
			w := echolock.RawWriter(echolock.EchoResponse(c))
			second = httptest.NewRecorder()
			echolock.SetRawWriter(echolock.EchoResponse(c), second)
			echolock.EchoResponse(c).Committed = false
			secondErr = next(c)
			echolock.SetRawWriter(echolock.EchoResponse(c), w)
			return nil
		}
	})
	e.POST("/charges", func(c echo.Context) error {
		runs.Add(1)
		b, err := io.ReadAll(c.Request().Body)
		if err != nil {
			return err
		}
		return c.String(http.StatusCreated, "charged "+string(b))
	}, echolock.Idempotency(store))
	srv := serve(t, e)
	first := do(t, srv, "POST", "/charges", "100", "Idempotency-Key", "k")
	if first.code != http.StatusCreated || first.body != "charged 100" {
		t.Fatalf("first: %d %q, want 201", first.code, first.body)
	}
	if secondErr != nil || second.Code != http.StatusCreated || second.Body.String() != "charged 100" ||
		second.Header().Get(echolock.HeaderIdempotentReplayed) != "true" {
		t.Errorf("called again: %v, %d %q %v; want the first answer replayed", secondErr, second.Code, second.Body, second.Header())
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("handler ran %d times, want 1", n)
	}
}
