package echolock_test

import (
	"io"
	"math"
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestMaxBodyBytesUnbounded: MaxBodyBytes set to the largest int64 (no
// limit of the middleware's own, the body being bounded further out) reads
// the body for a json: key like any other limit does; it read nothing
// (maxBody+1 overflowed), so every request answered 400 "lock key missing".
func TestMaxBodyBytesUnbounded(t *testing.T) {
	env := mwtest.New(t)
	e := echo.New()
	e.POST("/orders", func(c echo.Context) error {
		_, locked := scriptlock.Fence(c.Request().Context())
		b, _ := io.ReadAll(c.Request().Body)
		if !locked {
			return c.String(http.StatusOK, "unlocked")
		}
		return c.String(http.StatusOK, string(b))
	}, echolock.LockWithConfig(echolock.LockConfig{
		Client:       env.Locks,
		KeyPrefix:    env.Prefix,
		KeyLookup:    "json:order.id",
		MaxBodyBytes: math.MaxInt64,
	}))
	srv := serve(t, e)
	body := `{"order":{"id":"42"}}`
	if r := do(t, srv, "POST", "/orders", body, "Content-Type", "application/json"); r.code != http.StatusOK || r.body != body {
		t.Errorf("json: key with MaxBodyBytes = MaxInt64: %d %q, want 200 and the body, under the lock", r.code, r.body)
	}
}
