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

// TestFailOpenNotOnErrorReply: with FailOpen, a reachable Redis that answers
// the lock's scripts with an error reply that no retry cures (here "ERR
// unknown command", as a proxy or a server with the scripting commands
// renamed answers) is no unreachable Redis: the request answers 503 and the
// handler does not run.
func TestFailOpenNotOnErrorReply(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t, redistest.WithArgs("--rename-command", "EVALSHA", "", "--rename-command", "EVAL", ""))
	lc, err := scriptlock.New(node.Client(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lc.Close() })
	var ran atomic.Int64
	var out outcomes
	e := echo.New()
	e.POST("/:id", func(c echo.Context) error { ran.Add(1); return c.NoContent(http.StatusNoContent) },
		echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: redistest.Prefix(t), Client: lc, FailOpen: true, OnOutcome: out.report}))
	srv := serve(t, e)
	if r := do(t, srv, "POST", "/1", ""); r.code != http.StatusServiceUnavailable {
		t.Errorf("scripts answered ERR unknown command, fail open: got %d, want 503", r.code)
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("handler ran %d times without the lock while Redis was reachable", n)
	}
	if got := out.take(); len(got) != 1 || got[0] != scriptlock.RequestRedisDown {
		t.Errorf("outcomes %v, want [%v]", got, scriptlock.RequestRedisDown)
	}
}
