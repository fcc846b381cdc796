package echolock_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestDeadlineDuringWaitRetryAfter: a server-side request deadline
// (ContextTimeout) shorter than Wait ends the wait for a busy lock; the
// client, still there, gets the 503 with Retry-After (RetryAfter), as every
// 503 of the middleware carries one, so that it does not retry at once.
func TestDeadlineDuringWaitRetryAfter(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc()
	holder := env.Lock(t, locks, env.Prefix+"7")
	hctx := scriptlock.WithOwner(context.Background(), "test-holder")
	if _, err := holder.TryLock(hctx, 0); err != nil {
		t.Fatal(err)
	}
	defer holder.Unlock(hctx)
	e := echo.New()
	e.POST("/:id", func(c echo.Context) error { return c.NoContent(http.StatusNoContent) },
		middleware.ContextTimeout(300*time.Millisecond),
		echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: locks, Wait: 5 * time.Second, RetryAfter: 2 * time.Second}))
	srv := serve(t, e)
	r := do(t, srv, "POST", "/7", "")
	if r.code != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "2" {
		t.Errorf("wait ended by the request's deadline: %d Retry-After %q, want 503 Retry-After 2", r.code, r.header.Get("Retry-After"))
	}
}

// TestLockLostRetryAfter: the 503 answered for a lock lost before the
// handler answered carries Retry-After too: the request may be retried.
func TestLockLostRetryAfter(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc(scriptlock.WithWatchdog(3*time.Second, 100*time.Millisecond))
	e := echo.New()
	e.POST("/:id", func(c echo.Context) error {
		env.Node.Do(t, "DEL", env.Mutex(t, env.Prefix+c.Param("id")).Key())
		<-c.Request().Context().Done() // the lock is lost
		return nil
	}, echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: locks, RetryAfter: 2 * time.Second}))
	srv := serve(t, e)
	r := do(t, srv, "POST", "/7", "")
	if r.code != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "2" {
		t.Errorf("lock lost: %d Retry-After %q, want 503 Retry-After 2", r.code, r.header.Get("Retry-After"))
	}
}
