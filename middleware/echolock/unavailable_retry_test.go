package echolock_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestRedisDownRetryAfter: the 503 answered while Redis is unreachable says
// when to try again (Retry-After, RetryAfter in whole seconds), as the
// contended answer does: a client or a load balancer honouring it retries
// instead of giving up or hammering the server.
func TestRedisDownRetryAfter(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	e := echo.New()
	h := func(c echo.Context) error { return c.NoContent(http.StatusNoContent) }
	e.POST("/default/:id", h, echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: env.LockFunc()}))
	e.POST("/three/:id", h, echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: env.LockFunc(), RetryAfter: 3 * time.Second}))
	srv := serve(t, e)
	env.Node.Kill()
	for path, want := range map[string]string{"/default/1": "1", "/three/1": "3"} {
		r := do(t, srv, "POST", path, "")
		if r.code != http.StatusServiceUnavailable || r.header.Get("Retry-After") != want {
			t.Errorf("%s, Redis down: %d Retry-After %q, want 503 Retry-After %s", path, r.code, r.header.Get("Retry-After"), want)
		}
	}
}
