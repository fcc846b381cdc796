package echolock_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotencyFormReadBeforeNoValues: a form body that a middleware in
// front read as a form (Echo's MethodOverride taking the method from a form
// field) and that held no value Go accepts (fields separated by ';', as
// older clients send them) was read as a form: the handler answers it (400,
// no amount), as it does without a key. It was refused with 500 and logged
// as a body read otherwise by a middleware in front, a server
// misconfiguration.
func TestIdempotencyFormReadBeforeNoValues(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	var runs atomic.Int64
	e := echo.New()
	e.Pre(middleware.MethodOverrideWithConfig(middleware.MethodOverrideConfig{Getter: middleware.MethodFromForm("_method")}))
	e.POST("/charges", func(c echo.Context) error {
		runs.Add(1)
		if c.FormValue("amount") == "" {
			return c.String(http.StatusBadRequest, "amount required")
		}
		return c.String(http.StatusCreated, "charged "+c.FormValue("amount"))
	}, echolock.IdempotencyWithConfig(echolock.IdempotencyConfig{Store: env.Store(t)}))
	srv := serve(t, e)
	form := func(body string, key ...string) result {
		hdr := []string{"Content-Type", "application/x-www-form-urlencoded"}
		if len(key) > 0 {
			hdr = append(hdr, "Idempotency-Key", key[0])
		}
		return do(t, srv, "POST", "/charges", body, hdr...)
	}
	if r := form("amount=5;note=x"); r.code != http.StatusBadRequest || r.body != "amount required" {
		t.Fatalf("without a key: %d %q, want the handler's 400", r.code, r.body)
	}
	for i := range 2 {
		if r := form("amount=5;note=x", "K1"); r.code != http.StatusBadRequest || r.body != "amount required" {
			t.Errorf("with a key, call %d: %d %q, want the handler's 400", i+1, r.code, r.body)
		}
	}
	if r := form("amount=5", "K2"); r.code != http.StatusCreated || r.body != "charged 5" {
		t.Errorf("a form with values: %d %q, want 201", r.code, r.body)
	}
	if n := runs.Load(); n != 3 {
		t.Errorf("handler ran %d times, want 3 (the retry replayed)", n)
	}
}
