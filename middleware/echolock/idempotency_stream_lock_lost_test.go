package echolock_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotencyBehindLockLostMidStream: with the lock middleware further
// out than Idempotency (e.Use(Lock) and Idempotency on the route), a lock
// lost after the answer began ends the request's context as Idempotency sees
// it, but the client has not gone: the stream it got is stored and replayed,
// as with Idempotency in front of the lock, not taken for one cut short by
// its client leaving (the key kept, a retry answered 409).
func TestIdempotencyBehindLockLostMidStream(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	locks := env.LockFunc(scriptlock.WithWatchdog(3*time.Second, 100*time.Millisecond))
	var runs atomic.Int64
	e := echo.New()
	e.Use(echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: locks}))
	e.POST("/events/:id", flushedThenLost(env, t, &runs), echolock.Idempotency(store))
	srv := serve(t, e)
	if r := do(t, srv, "POST", "/events/1", "", "Idempotency-Key", "K"); r.code != http.StatusOK || r.body != "" {
		t.Fatalf("first: %d %q, want exactly what the handler sent (200, no body)", r.code, r.body)
	}
	r := do(t, srv, "POST", "/events/1", "", "Idempotency-Key", "K")
	if runs.Load() != 1 || r.code != http.StatusOK || r.body != "" || r.header.Get(echolock.HeaderIdempotentReplayed) != "true" {
		t.Fatalf("retry: %d %q replayed=%q, handler runs %d; want the 200 replayed and one run",
			r.code, r.body, r.header.Get(echolock.HeaderIdempotentReplayed), runs.Load())
	}
}
