package echolock_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// A lock factory that refuses the key's lock name answers 400, whatever
// FailOpen says; one that fails otherwise answers 503. Invalid lock options
// fail at setup.
func TestLockFuncErrors(t *testing.T) {
	env := mwtest.New(t)
	e := echo.New()
	h := func(c echo.Context) error { return c.NoContent(http.StatusNoContent) }
	badName := func(key string) (scriptlock.Locker, error) {
		return nil, fmt.Errorf("scriptlock: mutex %q: %w", key, scriptlock.ErrInvalidName)
	}
	broken := func(string) (scriptlock.Locker, error) { return nil, scriptlock.ErrClosed }
	e.POST("/name/:id", h, echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: badName, FailOpen: true}))
	e.POST("/broken/:id", h, echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: broken}))
	srv := serve(t, e)
	if r := do(t, srv, "POST", "/name/1", ""); r.code != http.StatusBadRequest {
		t.Errorf("invalid lock name: %d, want 400", r.code)
	}
	if r := do(t, srv, "POST", "/broken/1", ""); r.code != http.StatusServiceUnavailable {
		t.Errorf("failing lock factory: %d, want 503", r.code)
	}
	if _, err := (echolock.LockConfig{Client: env.Locks, Lease: -time.Second}).ToMiddleware(); err == nil {
		t.Error("negative Lease accepted")
	}
}
