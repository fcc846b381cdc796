package echolock_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestCookieKeyRepeated: a cookie: key sent twice with different values
// ("id=1; id=2", or on two Cookie lines) is refused with 400 before anything
// reaches Redis, as a header or query key sent twice with different values
// is: a handler reading the cookies into a map (the last wins) would work on
// the order the lock does not hold. The same value twice is one key.
func TestCookieKeyRepeated(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	keys := &keyLog{}
	lock := keys.lockFunc(env)
	e := echo.New()
	e.POST("/pay", func(c echo.Context) error { return c.NoContent(http.StatusOK) },
		echolock.LockWithConfig(echolock.LockConfig{KeyLookup: "cookie:id", KeyPrefix: env.Prefix, Lock: lock}))
	srv := serve(t, e)
	for _, c := range []struct {
		name string
		hdr  []string
		code int
		key  string
	}{
		{"one cookie", []string{"Cookie", "id=1"}, http.StatusOK, "1"},
		{"same value twice", []string{"Cookie", "id=1; other=x; id=1"}, http.StatusOK, "1"},
		{"two values in one line", []string{"Cookie", "id=1; id=2"}, http.StatusBadRequest, ""},
		{"two values on two lines", []string{"Cookie", "id=1", "Cookie", "id=2"}, http.StatusBadRequest, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			keys.reset()
			r := do(t, srv, "POST", "/pay", "", c.hdr...)
			got := keys.joined()
			if r.code != c.code || got != c.key {
				t.Errorf("%q: %d %q, locked %q; want %d, locked %q", c.hdr, r.code, strings.TrimSpace(r.body), got, c.code, c.key)
			}
		})
	}
	if keys := env.Keys(t, env.Prefix+"*"); len(keys) != 0 {
		t.Errorf("keys left in Redis: %q", keys)
	}
}
