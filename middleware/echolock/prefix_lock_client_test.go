package echolock_test

import (
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestKeyPrefixAfterLockClientPrefix: a Lock factory of a Client with a key
// prefix of its own names its locks after that prefix, as the Client
// option's own locks are. A KeyPrefix that after it names another lock's
// companion keys ("sc:" after "redisson_") or makes integer keys name read
// lease keys ("timeout:" after "orders:rwlock_") fails ToMiddleware with a
// Lock factory too: every request (with an integer key) would be answered
// 400 as if its key were bad. A prefix leaving the names valid locks.
func TestKeyPrefixAfterLockClientPrefix(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	for _, tc := range []struct{ client, prefix, key string }{
		{"redisson_", "sc:", "abc"},
		{"orders:rwlock_", "timeout:", "42"},
	} {
		c, err := scriptlock.New(env.Node.Client(t), scriptlock.WithKeyPrefix(tc.client))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		lock := func(key string) (scriptlock.Locker, error) { return c.Mutex(key) }
		if mw, err := (echolock.LockConfig{Lock: lock, KeyPrefix: tc.prefix}).ToMiddleware(); err == nil {
			e := echo.New()
			e.POST("/orders/:id", func(c echo.Context) error { return c.NoContent(http.StatusNoContent) }, mw)
			r := do(t, serve(t, e), "POST", "/orders/"+tc.key, "")
			t.Errorf("KeyPrefix %q with a Lock of a Client whose key prefix is %q accepted; key %q answered %d %q", tc.prefix, tc.client, tc.key, r.code, r.body)
		} else {
			t.Logf("%q after %q: %v", tc.prefix, tc.client, err)
		}
		ok := tc.prefix[:len(tc.prefix)-1] + "s:"
		mw, err := (echolock.LockConfig{Lock: lock, KeyPrefix: ok}).ToMiddleware()
		if err != nil {
			t.Errorf("KeyPrefix %q with a Lock of a Client whose key prefix is %q refused: %v", ok, tc.client, err)
			continue
		}
		e := echo.New()
		e.POST("/orders/:id", func(c echo.Context) error { return c.NoContent(http.StatusNoContent) }, mw)
		if r := do(t, serve(t, e), "POST", "/orders/"+tc.key, ""); r.code != http.StatusNoContent {
			t.Errorf("key %q under KeyPrefix %q after %q: %d %q", tc.key, ok, tc.client, r.code, r.body)
		}
	}
}
