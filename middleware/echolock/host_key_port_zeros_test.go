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

// TestHostHeaderKeyPortLeadingZeros: a port is a decimal number, leading
// zeros included (RFC 3986, 3.2.3: net.SplitHostPort and strconv.Atoi read
// "0080" as 80), so "Host: shop-a.example:0080" names shop-a.example as
// ":80" does, and "shop-a.example:08080" the host's port 8080.
func TestHostHeaderKeyPortLeadingZeros(t *testing.T) {
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
	for _, host := range []string{"shop-a.example:0080", "shop-a.example:00443", "shop-a.example:08080"} {
		if code := post(host); code != http.StatusConflict {
			t.Errorf("Host %s while its host and port are locked: %d, want 409", host, code)
		}
	}
	select {
	case h := <-ran:
		t.Errorf("handler ran for Host %q beside the lock of its host", h)
	default:
	}
	for _, host := range []string{"shop-a.example:0", "shop-a.example:8", "shop-a.example:044"} {
		if code := post(host); code != http.StatusOK {
			t.Errorf("Host %s: %d, want 200", host, code)
		}
		<-ran
	}
}
