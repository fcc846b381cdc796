package echolock_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
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
	t.Parallel()
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

// TestPathParamSpellings: Echo v4 hands a path parameter as sent when the
// path is not in its default encoding ("/orders/%31%32%33": net/url sets
// RawPath and Echo routes on it) and decoded otherwise, while a handler that
// decodes the parameter reads the same order either way. Every spelling of
// one order must take the same lock: a request on "/orders/123" holds it,
// and one on "/orders/%31%32%33" meets it instead of running beside it.
func TestPathParamSpellings(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	e := echo.New()
	var holding atomic.Bool
	entered := make(chan struct{})
	proceed := make(chan struct{})
	ran := make(chan string, 16)
	e.POST("/orders/:id", func(c echo.Context) error {
		if holding.CompareAndSwap(false, true) { // the first request holds the lock
			close(entered)
			select {
			case <-proceed:
			case <-time.After(10 * time.Second):
			}
			return c.NoContent(http.StatusOK)
		}
		ran <- c.Request().URL.EscapedPath()
		return c.NoContent(http.StatusOK)
	}, echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: env.LockFunc()}))
	srv := serve(t, e)

	first := make(chan result, 1)
	go func() { first <- do(t, srv, "POST", "/orders/123", "") }()
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal("first request did not reach the handler")
	}
	for _, p := range []string{"/orders/%31%32%33", "/orders/1%32%33"} {
		if r := do(t, srv, "POST", p, ""); r.code != http.StatusConflict {
			t.Errorf("%s while /orders/123 runs: %d %q, want 409", p, r.code, r.body)
		}
	}
	close(proceed)
	if r := <-first; r.code != http.StatusOK {
		t.Errorf("/orders/123: %d %q", r.code, r.body)
	}
	for len(ran) > 0 {
		t.Errorf("handler ran for %s beside /orders/123", <-ran)
	}

	hold := func(raw string) {
		ctx := context.Background()
		m := env.Mutex(t, env.Prefix+core.EscapeKey(raw))
		if _, err := m.TryLock(ctx, 0); err != nil {
			t.Fatalf("holding %q: %v", raw, err)
		}
		t.Cleanup(func() { _ = m.Unlock(context.WithoutCancel(ctx)) })
	}
	hold("a b")
	hold("%")
	hold("1")
	for _, c := range []struct {
		path string
		code int
	}{
		{"/orders/a%20b", http.StatusConflict},   // default encoding: Echo decodes it
		{"/orders/%61%20b", http.StatusConflict}, // RawPath: decoded here
		{"/orders/a%20%62", http.StatusConflict},
		{"/orders/%25", http.StatusConflict},
		{"/orders/%25%31", http.StatusOK}, // the order "%1", not "1"
		{"/orders/%2531", http.StatusOK},  // decoded once, as the handler sees it: "%31"
		{"/orders/%ff", http.StatusBadRequest},
		{"/orders/%31%00", http.StatusBadRequest},
	} {
		if r := do(t, srv, "POST", c.path, ""); r.code != c.code {
			t.Errorf("%s: %d %q, want %d", c.path, r.code, r.body, c.code)
		}
	}
}

// TestPathParamBadEscape: a path parameter that does not percent-decode (a
// RawPath set by a rewrite in front of the router, say) is refused with 400
// before anything reaches Redis.
func TestPathParamBadEscape(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	var runs atomic.Int64
	e := echo.New()
	e.POST("/orders/:id", func(c echo.Context) error {
		runs.Add(1)
		return c.NoContent(http.StatusOK)
	}, echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: env.LockFunc()}))
	e.POST("/idem/:id", func(c echo.Context) error {
		runs.Add(1)
		return c.NoContent(http.StatusOK)
	}, echolock.IdempotencyWithConfig(echolock.IdempotencyConfig{Store: store, StoreStatus: func(int) bool { return true }}),
		echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: env.LockFunc()}))
	dbsize := func() int64 {
		n, err := env.Node.Do(t, "DBSIZE").AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := dbsize()
	for _, raw := range []string{"/orders/%zz", "/orders/12%3", "/idem/%zz"} {
		req := httptest.NewRequest(http.MethodPost, "/orders/x", nil)
		req.URL.RawPath = raw
		req.Header.Set(echolock.HeaderIdempotencyKey, "k-"+raw)
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code != http.StatusBadRequest {
			t.Errorf("%s: %d %q, want 400", raw, rec.Code, rec.Body.String())
		}
	}
	if after := dbsize(); after != before {
		t.Errorf("DBSIZE %d before, %d after refused requests", before, after)
	}
	if runs.Load() != 0 {
		t.Errorf("handler ran %d times", runs.Load())
	}
}
