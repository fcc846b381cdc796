package echolock_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/core"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestHostHeaderKeyTrailingDot: "shop-a.example." is the fully qualified
// spelling of shop-a.example (RFC 1034, 3.1), which reaches the same server
// (curl https://shop-a.example./ sends it) and which servers in front, as
// nginx, take for the same host: it waits for shop-a.example's lock.
func TestHostHeaderKeyTrailingDot(t *testing.T) {
	env := mwtest.New(t)
	e := echo.New()
	ran := make(chan string, 16)
	e.POST("/pay", func(c echo.Context) error {
		ran <- c.Request().Host
		return c.NoContent(http.StatusOK)
	}, echolock.LockWithConfig(echolock.LockConfig{KeyLookup: "header:Host", KeyPrefix: env.Prefix, Lock: env.LockFunc()}))
	srv := serve(t, e)
	ctx := context.Background()
	for _, h := range []string{"shop-a.example", "shop-a.example:8080"} {
		m := env.Mutex(t, env.Prefix+core.EscapeKey(h))
		if _, err := m.TryLock(ctx, 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Unlock(context.WithoutCancel(ctx)) })
	}
	post := func(host string) int {
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
	for _, host := range []string{"shop-a.example.", "SHOP-A.example.:443", "shop-a.example.:8080"} {
		if code := post(host); code != http.StatusConflict {
			t.Errorf("Host %s while its host and port are locked: %d, want 409", host, code)
		}
	}
	select {
	case h := <-ran:
		t.Errorf("handler ran for Host %q beside the lock of its host", h)
	default:
	}
	for _, host := range []string{"shop-a.example..", "shop-b.example.", "shop-a.example.:8443"} {
		if code := post(host); code != http.StatusOK {
			t.Errorf("Host %s: %d, want 200", host, code)
		}
		<-ran
	}
}
