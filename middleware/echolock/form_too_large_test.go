package echolock_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestFormKeyBodyTooLarge: a form: lookup on a url-encoded body over the
// 10 MB net/http parses answers 413, as a json: lookup over MaxBodyBytes
// and a body over an enclosing BodyLimit do: the key is not invalid, the
// body is too large to read it from.
func TestFormKeyBodyTooLarge(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	var ran atomic.Int64
	e := echo.New()
	e.POST("/orders", func(c echo.Context) error { ran.Add(1); return c.NoContent(http.StatusNoContent) },
		echolock.LockWithConfig(echolock.LockConfig{Client: env.Locks, KeyPrefix: env.Prefix, KeyLookup: "form:id"}))
	srv := serve(t, e)
	body := "id=7&pad=" + strings.Repeat("x", 10<<20)
	if r := do(t, srv, "POST", "/orders", body, "Content-Type", "application/x-www-form-urlencoded"); r.code != http.StatusRequestEntityTooLarge {
		t.Errorf("form over 10 MB: %d %q, want 413", r.code, r.body)
	}
	if ran.Load() != 0 {
		t.Error("handler ran")
	}
}
