package echolock_test

import (
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/core"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestHostHeaderKey: a "header:Host" lookup locks the request's host, as
// FingerprintHeaders reads "Host". net/http takes Host out of the header
// map into Request.Host, so the lookup found nothing in any request and
// answered every one 400 lock key missing.
func TestHostHeaderKey(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	keys := &keyLog{}
	lock := keys.lockFunc(env)
	e := echo.New()
	e.POST("/pay", func(c echo.Context) error { return c.NoContent(http.StatusOK) },
		echolock.LockWithConfig(echolock.LockConfig{KeyLookup: "header:host", KeyPrefix: env.Prefix, Lock: lock}))
	srv := serve(t, e)
	for _, host := range []string{"shop-a.example", "shop-b.example:8443"} {
		keys.reset()
		code := postHost(t, srv, host)
		got := keys.joined()
		if want := core.EscapeKey(host); code != http.StatusOK || got != want {
			t.Errorf("Host %s: %d, locked %q; want 200, locked %q", host, code, got, want)
		}
	}
}
