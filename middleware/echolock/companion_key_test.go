package echolock_test

import (
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestHashTagPrefixTimeoutKey: with a hash-tag key prefix ("{orders}:", the
// documented way to put every lock in one Cluster slot), the key "timeout"
// made the lock name "{orders}:timeout", which has the form of a
// PermitSemaphore's lease set and is refused as an invalid lock name: the
// request answered 400 for a valid key. It is locked like any other key,
// under a name of its own.
func TestHashTagPrefixTimeoutKey(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	e := echo.New()
	e.POST("/orders/:id", func(c echo.Context) error {
		if _, ok := scriptlock.Fence(c.Request().Context()); !ok {
			return c.String(http.StatusOK, "unlocked")
		}
		return c.String(http.StatusOK, "locked "+c.Param("id"))
	}, echolock.LockWithConfig(echolock.LockConfig{Client: env.Locks, KeyPrefix: "{" + env.Prefix + "}:"}))
	srv := serve(t, e)
	for _, id := range []string{"timeout", "timeou%74", "1"} {
		if r := do(t, srv, "POST", "/orders/"+id, ""); r.code != http.StatusOK || r.body != "locked "+id {
			t.Errorf("key %q: %d %q, want 200 under the lock", id, r.code, r.body)
		}
	}
}
