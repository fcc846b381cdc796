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
	t.Parallel()
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

// TestIdempotencyMaxBodyBytesUnbounded: with MaxBodyBytes set to the largest
// int64, Idempotency read nothing of the body (the limit plus one byte
// overflowed): the handler got an empty body, and the same key with another
// body was replayed the first body's response instead of answering 422.
func TestIdempotencyMaxBodyBytesUnbounded(t *testing.T) {
	t.Parallel()
	srv, _ := idemServer(t, echolock.IdempotencyConfig{MaxBodyBytes: math.MaxInt64}, func(c echo.Context) error {
		b, _ := io.ReadAll(c.Request().Body)
		return c.String(http.StatusCreated, "charged "+string(b))
	})
	if r := do(t, srv, "POST", "/charges", "100", "Idempotency-Key", "K1"); r.code != http.StatusCreated || r.body != "charged 100" {
		t.Errorf("first: %d %q, want 201 %q", r.code, r.body, "charged 100")
	}
	if r := do(t, srv, "POST", "/charges", "1000", "Idempotency-Key", "K1"); r.code != http.StatusUnprocessableEntity {
		t.Errorf("same key, other body: %d %q, want 422", r.code, r.body)
	}
}
