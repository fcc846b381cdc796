package echolock_test

import (
	"io"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotencyBodyReadInFront: a middleware in front that has read the
// body (a JSON payload bound for validation and kept in the echo.Context)
// leaves nothing to fingerprint: the request is refused (500, a server
// misconfiguration), never run under a fingerprint without its body, under
// which the same key with another payload (another amount) would have been
// answered with the first payload's stored response.
func TestIdempotencyBodyReadInFront(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	var runs atomic.Int64
	e := echo.New()
	bindInFront := func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			b, err := io.ReadAll(c.Request().Body)
			if err != nil {
				return err
			}
			c.Set("payload", string(b))
			return next(c)
		}
	}
	e.POST("/charges", func(c echo.Context) error {
		runs.Add(1)
		return c.String(http.StatusCreated, "charged "+c.Get("payload").(string))
	}, bindInFront, echolock.Idempotency(store))
	srv := serve(t, e)
	first := do(t, srv, "POST", "/charges", `{"amount":100}`, "Idempotency-Key", "k", "Content-Type", "application/json")
	other := do(t, srv, "POST", "/charges", `{"amount":900}`, "Idempotency-Key", "k", "Content-Type", "application/json")
	if other.header.Get(echolock.HeaderIdempotentReplayed) != "" {
		t.Fatalf("another payload under the same key got the first one's response replayed: %d %q", other.code, other.body)
	}
	for _, r := range []result{first, other} {
		if r.code != http.StatusInternalServerError {
			t.Errorf("body read in front: %d %q, want 500", r.code, r.body)
		}
	}
	if n := runs.Load(); n != 0 {
		t.Errorf("handler ran %d times without a fingerprint of its body", n)
	}
	if keys := env.Keys(t, env.Prefix+"idem:*"); len(keys) != 0 {
		t.Errorf("records left: %v", keys)
	}
	// A request without a body is fingerprinted as before.
	if r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "k2"); r.code != http.StatusCreated {
		t.Errorf("no body: %d %q, want 201", r.code, r.body)
	}
}
