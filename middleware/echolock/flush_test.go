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

// flushedThenLost opens an event stream by flushing its headers (net/http
// sends them with 200), then its lock is lost before the first event: it
// stops, having sent the headers only.
func flushedThenLost(env *mwtest.Env, t *testing.T, runs *atomic.Int64) echo.HandlerFunc {
	return func(c echo.Context) error {
		runs.Add(1)
		res := echolock.EchoResponse(c)
		res.Header().Set(echo.HeaderContentType, "text/event-stream")
		res.Flush()
		env.Node.Do(t, "DEL", env.Mutex(t, env.Prefix+c.Param("id")).Key())
		<-c.Request().Context().Done() // the lock is lost
		return nil
	}
}

// TestLockLostAfterFlushedHeaders: headers flushed before any write are the
// start of the answer (200): a lock lost after them adds no error body to the
// stream the client has.
func TestLockLostAfterFlushedHeaders(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc(scriptlock.WithWatchdog(3*time.Second, 100*time.Millisecond))
	var runs atomic.Int64
	e := echo.New()
	e.GET("/events/:id", flushedThenLost(env, t, &runs),
		echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: locks}))
	srv := serve(t, e)
	if r := do(t, srv, "GET", "/events/1", ""); r.code != http.StatusOK || r.body != "" {
		t.Fatalf("client got %d %q, want exactly what the handler sent (200, no body)", r.code, r.body)
	}
}

// TestIdempotencyLockLostAfterFlushedHeaders: the same behind Idempotency:
// the stream the client got is stored and replayed, not run again.
func TestIdempotencyLockLostAfterFlushedHeaders(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	locks := env.LockFunc(scriptlock.WithWatchdog(3*time.Second, 100*time.Millisecond))
	var runs atomic.Int64
	e := echo.New()
	e.POST("/events/:id", flushedThenLost(env, t, &runs),
		echolock.Idempotency(store),
		echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: locks}))
	srv := serve(t, e)
	if r := do(t, srv, "POST", "/events/1", "", "Idempotency-Key", "K"); r.code != http.StatusOK || r.body != "" {
		t.Fatalf("first: %d %q, want exactly what the handler sent (200, no body)", r.code, r.body)
	}
	r := do(t, srv, "POST", "/events/1", "", "Idempotency-Key", "K")
	if runs.Load() != 1 || r.code != http.StatusOK || r.body != "" || r.header.Get(echolock.HeaderIdempotentReplayed) != "true" ||
		r.header.Get(echo.HeaderContentType) != "text/event-stream" {
		t.Fatalf("retry: %d %q replayed=%q type=%q, handler runs %d; want the 200 replayed and one run",
			r.code, r.body, r.header.Get(echolock.HeaderIdempotentReplayed), r.header.Get(echo.HeaderContentType), runs.Load())
	}
}
