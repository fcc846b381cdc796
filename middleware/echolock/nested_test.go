package echolock_test

import (
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestNestedLockMiddlewares: a route under two lock middlewares (a group
// locking the account, the route locking the order) runs its handler with
// both locks held, and code under the handler that locks either key with
// the request context re-enters it, as the package promises. The inner
// middleware took its lock under a fresh owner, so the request's context
// no longer carried the outer lock's owner: locking the account again
// blocked on the request's own lock (409 after the wait, or forever).
// An owner put in the context by other code is still not taken over.
func TestNestedLockMiddlewares(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc()
	e := echo.New()
	g := e.Group("/accounts/:acct", echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix + "acct:", KeyLookup: "param:acct", Lock: locks}))
	relock := func(c echo.Context, name string) error {
		ctx := c.Request().Context()
		l := env.Lock(t, locks, name)
		if _, err := l.TryLock(ctx, 0); err != nil {
			return echo.NewHTTPError(http.StatusConflict, "relock "+name+": "+err.Error())
		}
		return l.Unlock(ctx)
	}
	g.POST("/orders/:id", func(c echo.Context) error {
		if err := relock(c, env.Prefix+"acct:"+c.Param("acct")); err != nil {
			return err
		}
		if err := relock(c, env.Prefix+"order:"+c.Param("id")); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	}, echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix + "order:", Lock: locks}))
	srv := serve(t, e)
	if r := do(t, srv, "POST", "/accounts/a1/orders/o1", ""); r.code != http.StatusNoContent {
		t.Errorf("nested locks, relocking both under the handler: %d %s, want 204", r.code, r.body)
	}
	if keys := env.Keys(t, env.Prefix+"*"); len(keys) != 0 {
		t.Errorf("keys left behind: %v", keys)
	}

	// An owner set by other code in front is not taken over: two requests
	// carrying the same one still exclude each other.
	e2 := echo.New()
	e2.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			c.SetRequest(c.Request().WithContext(scriptlock.WithOwner(c.Request().Context(), "same-user")))
			return next(c)
		}
	})
	hold := make(chan struct{})
	held := make(chan struct{})
	e2.POST("/:id", func(c echo.Context) error {
		if c.QueryParam("hold") != "" {
			close(held)
			<-hold
		}
		return c.NoContent(http.StatusNoContent)
	}, echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: locks}))
	srv2 := serve(t, e2)
	first := make(chan result, 1)
	go func() { first <- do(t, srv2, "POST", "/9?hold=1", "") }()
	<-held
	if r := do(t, srv2, "POST", "/9", ""); r.code != http.StatusConflict {
		t.Errorf("second request with the same context owner: %d, want 409", r.code)
	}
	close(hold)
	<-first
}
