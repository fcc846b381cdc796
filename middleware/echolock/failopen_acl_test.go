package echolock_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/echolock"
)

// TestFailOpenNotOnACLDenial: with FailOpen, a Redis that answers but
// refuses the lock's scripts to the client's user (NOPERM: an ACL that
// lacks EVALSHA) is no unreachable Redis: the request answers 503 and the
// handler does not run. It ran without the lock, so a wrong ACL silently
// turned mutual exclusion off for every request.
func TestFailOpenNotOnACLDenial(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	if err := node.Do(t, "ACL", "SETUSER", "noscripts", "on", "nopass", "~*", "&*", "+@all", "-evalsha", "-eval", "-evalsha_ro", "-eval_ro").Error(); err != nil {
		t.Fatal(err)
	}
	lc, err := scriptlock.New(node.Client(t, func(o *rueidis.ClientOption) { o.Username = "noscripts" }))
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
		t.Errorf("scripts denied by ACL, fail open: got %d, want 503", r.code)
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("handler ran %d times without the lock while Redis was reachable", n)
	}
	t.Logf("outcomes %v", out.take())
}

// TestFailOpenNotOnScriptACLDenial: an ACL that grants EVALSHA but denies
// the user a key, command or channel the lock's script uses is refused
// inside the script, where Redis 7 answers "ERR The user executing the
// script can't ...", not NOPERM. That Redis is reachable all the same: with
// FailOpen, the request answers 503 and the handler does not run.
func TestFailOpenNotOnScriptACLDenial(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	for name, rules := range map[string][]string{
		// The lock keys of this test only: the lock's companion keys
		// (fencing counter, records) are outside the pattern.
		"keys": {"~" + redistest.Prefix(t) + "*", "&*", "+@all"},
		// Every key, but not the hash command acquisitions run.
		"command": {"~*", "&*", "+@all", "-hincrby", "-hset", "-hsetnx"},
	} {
		t.Run(name, func(t *testing.T) {
			user := "denied" + name
			if err := node.Do(t, append([]string{"ACL", "SETUSER", user, "on", "nopass"}, rules...)...).Error(); err != nil {
				t.Fatal(err)
			}
			lc, err := scriptlock.New(node.Client(t, func(o *rueidis.ClientOption) { o.Username = user }))
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
				t.Errorf("script's commands denied by ACL, fail open: got %d, want 503", r.code)
			}
			if n := ran.Load(); n != 0 {
				t.Errorf("handler ran %d times without the lock while Redis was reachable", n)
			}
			t.Logf("outcomes %v", out.take())
		})
	}
}
