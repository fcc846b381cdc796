package echolock_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotencyStreamCutByClient: a handler streaming its answer (events,
// flushed as they come) that stops when its client goes away and returns
// nil, as an event loop on ctx.Done does, has sent only part of its answer,
// which the client did not even get whole: the key is kept and a retry gets
// 409, as when it returns an error after its answer began, not that part
// replayed as the whole answer. An answer begun after the client left is
// whole: stored and replayed.
func TestIdempotencyStreamCutByClient(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	returned, started := make(chan struct{}, 1), make(chan struct{}, 1)
	e := echo.New()
	e.POST("/exports", func(c echo.Context) error {
		defer func() { returned <- struct{}{} }()
		c.Response().Header().Set(echo.HeaderContentType, "text/event-stream")
		c.Response().WriteHeader(http.StatusOK)
		for i := 1; ; i++ {
			if _, err := c.Response().Write([]byte("data: part\n\n")); err != nil {
				return nil
			}
			echolock.EchoResponse(c).Flush()
			select {
			case <-c.Request().Context().Done():
				return nil // the usual event loop: the client has gone
			case <-time.After(20 * time.Millisecond):
			}
		}
	}, echolock.Idempotency(store))
	e.POST("/payments", func(c echo.Context) error {
		defer func() { returned <- struct{}{} }()
		started <- struct{}{}
		<-c.Request().Context().Done() // the work goes on without the client
		return c.String(http.StatusCreated, "paid")
	}, echolock.Idempotency(store))
	srv := serve(t, e)

	leaveMidStream(t, srv, "/exports", "K")
	waitReturned(t, returned, 5*time.Second, "the handler did not see its client go")
	if r := settled(t, srv, "/exports", "K"); r.code != http.StatusConflict || !strings.Contains(r.body, "not stored") {
		t.Errorf("retry after the client left mid-stream: %d %q replayed %q, want 409: the answer was cut short, not replayable",
			r.code, r.body, r.header.Get(echolock.HeaderIdempotentReplayed))
	}

	// An answer begun after the client left is whole: stored and replayed.
	ctx, cancel := context.WithCancel(context.Background())
	leaveWhen(t, ctx, cancel, srv, "/payments", "K2", started) // the client leaves once the handler has begun
	waitReturned(t, returned, 5*time.Second, "the payment's handler did not begin and return within 5s")
	if r := settled(t, srv, "/payments", "K2"); r.code != http.StatusCreated || r.body != "paid" || r.header.Get(echolock.HeaderIdempotentReplayed) != "true" {
		t.Errorf("retry of a request answered after its client left: %d %q, want the 201 replayed", r.code, r.body)
	}
}

// settled posts to path with key until the key is no longer in flight (the
// middleware settles it once the handler has returned) and returns that
// answer.
func settled(t *testing.T, srv *httptest.Server, path, key string) result {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := do(t, srv, http.MethodPost, path, "", echolock.HeaderIdempotencyKey, key)
		if r.code != http.StatusConflict || !strings.Contains(r.body, "being processed") || time.Now().After(deadline) {
			return r
		}
		time.Sleep(20 * time.Millisecond)
	}
}
