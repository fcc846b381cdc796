package echolock_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/echolock"
)

// TestFailOpenNotOnBadFenceCounter: with FailOpen, a lock whose fencing-token
// counter holds no integer (ErrFenceCounter) is refused for what it is, as a
// lock of another kind under its name is: every request would run without
// its lock until someone fixed the key. The request answers 503 and the
// handler does not run.
func TestFailOpenNotOnBadFenceCounter(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	lc, err := scriptlock.New(node.Client(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lc.Close() })
	prefix := redistest.Prefix(t)
	node.Do(t, "SET", "redisson_lock_token:{"+prefix+"1}", "not a number")
	var ran atomic.Int64
	var out outcomes
	e := echo.New()
	e.POST("/:id", func(c echo.Context) error { ran.Add(1); return c.NoContent(http.StatusNoContent) },
		echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: prefix, Client: lc, FailOpen: true, OnOutcome: out.report}))
	srv := serve(t, e)
	if r := do(t, srv, "POST", "/1", ""); r.code != http.StatusServiceUnavailable {
		t.Errorf("fencing counter holds no integer, fail open: got %d, want 503", r.code)
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("handler ran %d times without the lock while Redis was reachable", n)
	}
	if got := out.take(); len(got) != 1 || got[0] != scriptlock.RequestRedisDown {
		t.Errorf("outcomes %v, want [%v]", got, scriptlock.RequestRedisDown)
	}
}
