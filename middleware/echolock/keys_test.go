package echolock_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/core"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestOneKeyPerOrder holds the lock of one order and sends requests that
// spell the same order differently: each must meet the held lock (409),
// never run beside it. Spellings a handler could read two ways are refused.
func TestOneKeyPerOrder(t *testing.T) {
	env := mwtest.New(t)
	e := echo.New()
	ran := make(chan string, 16)
	e.POST("/orders", func(c echo.Context) error {
		var req struct {
			Order struct {
				ID any `json:"id"`
			} `json:"order"`
		}
		if err := c.Bind(&req); err != nil {
			return err
		}
		ran <- fmt.Sprint(req.Order.ID)
		return c.NoContent(http.StatusOK)
	}, echolock.LockWithConfig(echolock.LockConfig{KeyLookup: "json:order.id", KeyPrefix: env.Prefix, Lock: env.LockFunc(), MaxBodyBytes: 1024}))
	srv := serve(t, e)

	hold := func(t *testing.T, raw string) {
		t.Helper()
		ctx := context.Background()
		m := env.Mutex(t, env.Prefix+core.EscapeKey(raw))
		if _, err := m.TryLock(ctx, 0); err != nil {
			t.Fatalf("holding %q: %v", raw, err)
		}
		t.Cleanup(func() { _ = m.Unlock(context.WithoutCancel(ctx)) })
	}
	hold(t, "victim")
	hold(t, "42")
	hold(t, "0")

	for _, c := range []struct{ body string }{
		{`{"ORDER":{"ID":"victim"}}`},
		{`{"Order":{"iD":"victim"}}`},
		{`{"order":{"id":4.2e1}}`},
		{`{"order":{"id":42.0}}`},
		{`{"order":{"id":-0}}`},
		{`{"order":{"id":0e9}}`},
	} {
		if r := do(t, srv, "POST", "/orders", c.body, "Content-Type", "application/json"); r.code != http.StatusConflict {
			t.Errorf("%s while its order is locked: %d %s, want 409", c.body, r.code, r.body)
		}
	}
	for _, c := range []struct {
		body string
		code int
	}{
		{`{"order":{"id":"decoy"},"ORDER":{"ID":"victim"}}`, http.StatusBadRequest},
		{`{"order":{"id":"decoy","Id":"victim"}}`, http.StatusBadRequest},
		{`{"order":{"id":"1\u200b"}}`, http.StatusBadRequest},
		{`{"order":{"id":"a\u2028b"}}`, http.StatusBadRequest},
		{`{"order":{"id":"a\u202eb"}}`, http.StatusBadRequest},
		{`{"order":{"id":"1"},"pad":"` + strings.Repeat("x", 2048) + `"}`, http.StatusRequestEntityTooLarge},
	} {
		if r := do(t, srv, "POST", "/orders", c.body, "Content-Type", "application/json"); r.code != c.code {
			t.Errorf("%.60s: %d %s, want %d", c.body, r.code, r.body, c.code)
		}
	}
	select {
	case b := <-ran:
		t.Errorf("handler ran for %s", b)
	case <-time.After(10 * time.Millisecond):
	}
	if r := do(t, srv, "POST", "/orders", `{"order":{"id":"other"}}`, "Content-Type", "application/json"); r.code != http.StatusOK {
		t.Errorf("unrelated order: %d %s", r.code, r.body)
	}
}
