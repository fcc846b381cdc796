package echolock_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestLockLostAfterEarlyHints: a lock lost after the handler sent only 103
// Early Hints through echo.Response (which takes any status for the answer)
// is answered 503 with Retry-After, as when nothing was written: a 103 is no
// answer. It used to pass for one, and the client got the empty 200 net/http
// sends for a handler that answered nothing, as if its request had been done.
func TestLockLostAfterEarlyHints(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc(scriptlock.WithWatchdog(3*time.Second, 100*time.Millisecond))
	e := echo.New()
	e.POST("/:id", func(c echo.Context) error {
		c.Response().Header().Set("Link", "</style.css>; rel=preload; as=style")
		c.Response().WriteHeader(http.StatusEarlyHints)
		env.Node.Do(t, "DEL", env.Mutex(t, env.Prefix+c.Param("id")).Key())
		<-c.Request().Context().Done() // the lock is lost
		return nil
	}, echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: locks, RetryAfter: 2 * time.Second}))
	srv := serve(t, e)
	r := do(t, srv, "POST", "/7", "")
	if r.code != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "2" {
		t.Errorf("lock lost after 103: %d %q Retry-After %q, want 503 Retry-After 2", r.code, r.body, r.header.Get("Retry-After"))
	}
}
