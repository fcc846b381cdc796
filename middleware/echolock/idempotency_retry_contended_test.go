package echolock_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotencyRetryAfterContended: a middleware between Idempotency and
// the lock retries a request the lock middleware refused (409, the lock was
// busy) on the same echo.Context; the retry takes the lock and the handler
// answers 201. That answer is stored and replayed to the client's retry with
// the same Idempotency-Key: the first attempt's refusal, an answer of the
// lock middleware, does not mark the handler's answer as one, nor does its
// Retry-After stay on it.
func TestIdempotencyRetryAfterContended(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	locks := env.LockFunc()
	holder := env.Lock(t, locks, env.Prefix+"7")
	hctx := scriptlock.WithOwner(context.Background(), "test-holder")
	if _, err := holder.TryLock(hctx, 0); err != nil {
		t.Fatal(err)
	}
	retry := func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			err := next(c)
			var he *echo.HTTPError
			if errors.As(err, &he) && he.Code == http.StatusConflict && !echolock.EchoResponse(c).Committed {
				// The holder is done by now: try once more.
				if uerr := holder.Unlock(hctx); uerr != nil {
					t.Error(uerr)
				}
				return next(c)
			}
			return err
		}
	}
	var runs atomic.Int64
	e := echo.New()
	e.POST("/charges/:id", func(c echo.Context) error {
		runs.Add(1)
		return c.String(http.StatusCreated, "charged")
	}, echolock.Idempotency(store), retry, echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: locks}))
	srv := serve(t, e)
	first := do(t, srv, "POST", "/charges/7", "", "Idempotency-Key", "K")
	if first.code != http.StatusCreated || runs.Load() != 1 || first.header.Get("Retry-After") != "" {
		t.Fatalf("first: %d %q Retry-After %q, handler runs %d; want 201 after the retry, no Retry-After, one run",
			first.code, first.body, first.header.Get("Retry-After"), runs.Load())
	}
	again := do(t, srv, "POST", "/charges/7", "", "Idempotency-Key", "K")
	if again.code != http.StatusCreated || again.header.Get(echolock.HeaderIdempotentReplayed) != "true" || runs.Load() != 1 {
		t.Errorf("client's retry: %d %q (replayed %q), handler runs %d; want the 201 replayed and one run",
			again.code, again.body, again.header.Get(echolock.HeaderIdempotentReplayed), runs.Load())
	}
}
