package echolock_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotencyBehindLockLostNothingWritten: with the lock middleware
// further out than Idempotency (e.Use(Lock), Idempotency on the route), a
// handler that stops on its lock's loss and returns without writing has
// given no answer: the client gets the lock middleware's 503, as with
// Idempotency in front of the lock, and the key is released, so the retry
// runs the request. An empty 200 stored for it would tell the client, and
// every retry for the record's TTL, that work abandoned was done.
func TestIdempotencyBehindLockLostNothingWritten(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	locks := env.LockFunc(scriptlock.WithWatchdog(3*time.Second, 100*time.Millisecond))
	var runs atomic.Int64
	e := echo.New()
	e.Use(echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: locks}))
	e.POST("/orders/:id", func(c echo.Context) error {
		if runs.Add(1) > 1 {
			return c.String(http.StatusCreated, "done")
		}
		env.Node.Do(t, "DEL", env.Mutex(t, env.Prefix+c.Param("id")).Key())
		<-c.Request().Context().Done() // the lock is lost: give up, answer nothing
		return nil
	}, echolock.Idempotency(store))
	srv := serve(t, e)
	r := do(t, srv, "POST", "/orders/1", "", "Idempotency-Key", "K")
	if r.code != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
		t.Fatalf("first: %d %q (Retry-After %q), want the lock middleware's 503 with Retry-After",
			r.code, r.body, r.header.Get("Retry-After"))
	}
	r = do(t, srv, "POST", "/orders/1", "", "Idempotency-Key", "K")
	if r.code != http.StatusCreated || r.body != "done" || r.header.Get(echolock.HeaderIdempotentReplayed) != "" || runs.Load() != 2 {
		t.Fatalf("retry: %d %q replayed=%q, handler runs %d; want it run again (201 \"done\", 2 runs)",
			r.code, r.body, r.header.Get(echolock.HeaderIdempotentReplayed), runs.Load())
	}
}

// TestIdempotencyInnerOuterClaimLostNothingWritten: the same for an inner
// Idempotency middleware of another scope under an outer one whose claim is
// lost: a handler that gives up on it without writing answers nothing, so
// the outer middleware answers 503 and neither stores an empty 200; the
// retry runs the request.
func TestIdempotencyInnerOuterClaimLostNothingWritten(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t, idempotency.WithClaimTTL(600*time.Millisecond))
	scoped := func(scope string) echo.MiddlewareFunc {
		mw, err := echolock.IdempotencyConfig{Store: store, Scope: func(echo.Context) string { return scope }}.ToMiddleware()
		if err != nil {
			t.Fatal(err)
		}
		return mw
	}
	var runs atomic.Int64
	e := echo.New()
	e.Use(scoped("outer"))
	e.POST("/charges", func(c echo.Context) error {
		if runs.Add(1) > 1 {
			return c.String(http.StatusCreated, "charged")
		}
		env.Node.Do(t, "DEL", store.RecordKey("outer", "K")) // the outer claim is lost
		<-c.Request().Context().Done()                       // give up, answer nothing
		return nil
	}, scoped("inner"))
	srv := serve(t, e)
	r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K")
	if r.code != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
		t.Fatalf("first: %d %q (Retry-After %q), want the outer middleware's 503 with Retry-After",
			r.code, r.body, r.header.Get("Retry-After"))
	}
	r = do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K")
	if r.code != http.StatusCreated || r.body != "charged" || r.header.Get(echolock.HeaderIdempotentReplayed) != "" || runs.Load() != 2 {
		t.Fatalf("retry: %d %q replayed=%q, handler runs %d; want it run again (201 \"charged\", 2 runs)",
			r.code, r.body, r.header.Get(echolock.HeaderIdempotentReplayed), runs.Load())
	}
}

// TestIdempotencyBehindLockLostErrorAnswer: likewise for a handler that,
// its lock lost further out, returns an error Idempotency would store (an
// *echo.HTTPError 422) without having written anything: the lock
// middleware's 503 answers it, as with Idempotency in front of the lock,
// not the 422 stored for every retry; the retry runs.
func TestIdempotencyBehindLockLostErrorAnswer(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	locks := env.LockFunc(scriptlock.WithWatchdog(3*time.Second, 100*time.Millisecond))
	var runs atomic.Int64
	e := echo.New()
	e.Use(echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: locks}))
	e.POST("/orders/:id", func(c echo.Context) error {
		if runs.Add(1) > 1 {
			return c.String(http.StatusCreated, "done")
		}
		env.Node.Do(t, "DEL", env.Mutex(t, env.Prefix+c.Param("id")).Key())
		<-c.Request().Context().Done() // the lock is lost: the order's state cannot be trusted
		return echo.NewHTTPError(http.StatusUnprocessableEntity, "order changed meanwhile")
	}, echolock.Idempotency(store))
	srv := serve(t, e)
	r := do(t, srv, "POST", "/orders/1", "", "Idempotency-Key", "K")
	if r.code != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
		t.Fatalf("first: %d %q (Retry-After %q), want the lock middleware's 503 with Retry-After",
			r.code, r.body, r.header.Get("Retry-After"))
	}
	r = do(t, srv, "POST", "/orders/1", "", "Idempotency-Key", "K")
	if r.code != http.StatusCreated || r.body != "done" || runs.Load() != 2 {
		t.Fatalf("retry: %d %q replayed=%q, handler runs %d; want it run again (201 \"done\", 2 runs)",
			r.code, r.body, r.header.Get(echolock.HeaderIdempotentReplayed), runs.Load())
	}
}
