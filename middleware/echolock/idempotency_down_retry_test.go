package echolock_test

import (
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
)

// TestIdempotencyStoreDownRetryAfter: the 503 answered while the idempotency
// store cannot be reached says when to try again, as the lock middleware's
// 503 for an unreachable Redis does: in front of the lock middleware it is
// the answer a client gets when Redis is down, and one honouring Retry-After
// retries instead of giving up or hammering the server.
func TestIdempotencyStoreDownRetryAfter(t *testing.T) {
	t.Parallel()
	srv, node := idemServer(t, echolock.IdempotencyConfig{}, func(c echo.Context) error { return c.NoContent(http.StatusNoContent) })
	node.Kill()
	r := do(t, srv, "POST", "/charges", "b", "Idempotency-Key", "k")
	if r.code != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "1" {
		t.Errorf("store down: %d Retry-After %q, want 503 Retry-After 1", r.code, r.header.Get("Retry-After"))
	}
}
