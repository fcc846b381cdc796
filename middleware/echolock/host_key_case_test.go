package echolock_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/core"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestHostHeaderKeySpellings: a host is case-insensitive, and a port left
// empty or the scheme's default port names the same host as no port (RFC
// 9110, 4.2.3). "Host: SHOP-A.example" and "Host: shop-a.example:80" name
// the site "shop-a.example", which a handler resolving its tenant from the
// host works on, so they wait for its lock. The default ports of http and
// https are both dropped (a proxy in front may have ended TLS). Another
// port is another key.
func TestHostHeaderKeySpellings(t *testing.T) {
	t.Parallel()
	checkHostSpellings(t, []string{"shop-a.example", "[2001:db8::a]"}, "host is",
		[]string{"SHOP-A.example", "Shop-A.Example", "shop-a.example:80", "shop-a.example:", "[2001:DB8::A]", "[2001:db8::a]:80", "shop-a.example:443"},
		[]string{"shop-a.example:8080", "shop-b.example"})
}

// checkHostSpellings serves a "header:Host" lock, holds the lock of each
// host in held, and posts each spelling: those in waiting are answered 409
// (lockedWhat names what of theirs is locked in the failure message) without
// the handler running, those in free 200.
func checkHostSpellings(t *testing.T, held []string, lockedWhat string, waiting, free []string) {
	t.Helper()
	env := mwtest.New(t)
	e := echo.New()
	ran := make(chan string, 16)
	e.POST("/pay", func(c echo.Context) error {
		ran <- c.Request().Host
		return c.NoContent(http.StatusOK)
	}, echolock.LockWithConfig(echolock.LockConfig{KeyLookup: "header:Host", KeyPrefix: env.Prefix, Lock: env.LockFunc()}))
	srv := serve(t, e)
	ctx := context.Background()
	for _, h := range held {
		m := env.Mutex(t, env.Prefix+core.EscapeKey(h))
		if _, err := m.TryLock(ctx, 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Unlock(context.WithoutCancel(ctx)) })
	}
	for _, host := range waiting {
		if code := postHost(t, srv, host); code != http.StatusConflict {
			t.Errorf("Host %s while its %s locked: %d, want 409", host, lockedWhat, code)
		}
	}
	select {
	case h := <-ran:
		t.Errorf("handler ran for Host %q beside the lock of its host", h)
	default:
	}
	for _, host := range free {
		if code := postHost(t, srv, host); code != http.StatusOK {
			t.Errorf("Host %s: %d, want 200", host, code)
		}
		<-ran
	}
}

// postHost posts to srv's /pay with the given Host header and returns the
// status code.
func postHost(t *testing.T, srv *httptest.Server, host string) int {
	t.Helper()
	req, err := http.NewRequest("POST", srv.URL+"/pay", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
