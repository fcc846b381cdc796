package echolock_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotency503RetryAfter: every 503 of the Idempotency middleware
// that asks the client to try again says when, as its 503 for an
// unreachable store and the lock middleware's 503s do: a claim lost while
// the handler ran (Redis lost it, or could not renew it in time), and a
// reservation ended by a server-side request deadline (ContextTimeout) while
// Redis did not answer, the client still waiting for the answer.
func TestIdempotency503RetryAfter(t *testing.T) {
	// Not parallel: its claim is renewed against sub-second deadlines, which
	// other tests' load in this process would put at risk.
	t.Run("claim lost", func(t *testing.T) {
		env := mwtest.New(t)
		store := env.Store(t, idempotency.WithClaimTTL(300*time.Millisecond))
		e := echo.New()
		e.POST("/charges", func(c echo.Context) error {
			env.DropRecords(t)
			<-c.Request().Context().Done() // the claim is lost
			return c.Request().Context().Err()
		}, echolock.Idempotency(store))
		srv := serve(t, e)
		r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "k")
		if r.code != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "1" {
			t.Errorf("claim lost: %d Retry-After %q, want 503 Retry-After 1", r.code, r.header.Get("Retry-After"))
		}
	})
	t.Run("deadline while reserving", func(t *testing.T) {
		env := mwtest.New(t)
		store := env.Store(t, idempotency.WithTimeout(5*time.Second))
		e := echo.New()
		e.POST("/charges", func(c echo.Context) error { return c.NoContent(http.StatusNoContent) },
			middleware.ContextTimeout(300*time.Millisecond), echolock.Idempotency(store))
		srv := serve(t, e)
		env.Node.Pause()
		defer env.Node.Resume()
		r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "k")
		if r.code != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "1" {
			t.Errorf("reservation ended by the request's deadline: %d Retry-After %q, want 503 Retry-After 1", r.code, r.header.Get("Retry-After"))
		}
	})
}
