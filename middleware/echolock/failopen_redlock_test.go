package echolock_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/echolock"
)

// TestFailOpenNotOnRedLockACLDenial: a RedLock whose nodes refuse for
// different reasons fails with one QuorumError naming each node's: here
// the first node is out of memory (a passing refusal) and the other two
// refuse the lock's scripts to the client's user (NOPERM), so no majority
// can ever grant it. That Redis is reachable and refusing for good: with
// FailOpen the request answers 503 and the handler does not run. It ran
// without the lock, as only the first node's refusal was looked at.
func TestFailOpenNotOnRedLockACLDenial(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := make([]*scriptlock.Client, len(nodes))
	for i, node := range nodes {
		var opts []func(*rueidis.ClientOption)
		if i > 0 {
			if err := node.Do(t, "ACL", "SETUSER", "noscripts", "on", "nopass", "~*", "&*", "+@all", "-evalsha", "-eval", "-evalsha_ro", "-eval_ro").Error(); err != nil {
				t.Fatal(err)
			}
			opts = append(opts, func(o *rueidis.ClientOption) { o.Username = "noscripts" })
		}
		c, err := scriptlock.New(node.Client(t, opts...), scriptlock.WithKeyPrefix(redistest.Prefix(t)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		cs[i] = c
	}
	nodes[0].OutOfMemory(t)
	var ran atomic.Int64
	var out outcomes
	e := echo.New()
	e.POST("/:id", func(c echo.Context) error { ran.Add(1); return c.NoContent(http.StatusNoContent) },
		echolock.LockWithConfig(echolock.LockConfig{FailOpen: true, OnOutcome: out.report, Wait: time.Second,
			// Each node's first call dials and loads the script: 2 s for it,
			// not the default 200 ms, which a loaded machine's nodes all
			// missed, and a request whose nodes did not answer may fail open.
			Lock: func(key string) (scriptlock.Locker, error) {
				return scriptlock.NewRedLock(key, cs, scriptlock.WithNodeTimeout(2*time.Second))
			}}))
	srv := serve(t, e)
	if r := do(t, srv, "POST", "/1", ""); r.code != http.StatusServiceUnavailable {
		t.Errorf("RedLock refused for good by a majority, fail open: got %d, want 503", r.code)
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("handler ran %d times without the lock while Redis was reachable", n)
	}
	t.Logf("outcomes %v", out.take())
}
