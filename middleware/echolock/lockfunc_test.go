package echolock_test

import (
	"fmt"
	"net/http"
	"sync/atomic"
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
	t.Parallel()
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

// With FailOpen, only an unreachable Redis runs the handler without the
// lock: a lock that Redis refuses for what it is (its name taken by another
// lock kind, a lock that cannot be re-entered, invalid options) answers 503
// and the handler does not run.
func TestFailOpenOnlyWhenUnreachable(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	e := echo.New()
	var ran atomic.Int64
	h := func(c echo.Context) error { ran.Add(1); return c.NoContent(http.StatusNoContent) }
	e.POST("/kind/:id", h, echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: env.LockFunc(), FailOpen: true}))
	srv := serve(t, e)
	// The request's lock name is held by a lock of another kind (a string
	// key, as a LeanMutex or a plain SET NX lock keeps).
	key := env.Mutex(t, env.Prefix+"7").Key()
	env.Node.Do(t, "SET", key, "someone-else")
	if r := do(t, srv, "POST", "/kind/7", ""); r.code != http.StatusServiceUnavailable {
		t.Errorf("lock name held by another kind, fail open: got %d, want 503", r.code)
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("handler ran %d times without the lock while Redis was reachable", n)
	}
}
