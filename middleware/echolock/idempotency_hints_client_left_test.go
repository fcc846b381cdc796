package echolock_test

import (
	"context"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotencyEarlyHintsThenClientLeft: a handler that sent 103 Early
// Hints, its answer begun, and then stopped when its client went away,
// returning nil without a final status, was cut short: the client got no
// answer, and the empty 200 net/http sends for such a handler is no answer
// it gave. The key is kept and a retry gets 409, as for a stream cut short,
// not that empty 200 replayed as the request's success.
func TestIdempotencyEarlyHintsThenClientLeft(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	returned := make(chan struct{}, 1)
	e := echo.New()
	e.POST("/payments", func(c echo.Context) error {
		defer func() { returned <- struct{}{} }()
		c.Response().Header().Set("Link", "</receipt.css>; rel=preload; as=style")
		c.Response().WriteHeader(http.StatusEarlyHints)
		select {
		case <-c.Request().Context().Done():
			return nil // the client has gone: no receipt to send
		case <-time.After(5 * time.Second):
			return c.String(http.StatusCreated, "paid")
		}
	}, echolock.Idempotency(store))
	srv := serve(t, e)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hinted := make(chan struct{}, 1)
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{Got1xxResponse: func(int, textproto.MIMEHeader) error {
		hinted <- struct{}{}
		return nil
	}})
	leaveWhen(t, ctx, cancel, srv, "/payments", "K", hinted) // the client leaves once it has the hints
	waitReturned(t, returned, 10*time.Second, "the handler did not return")
	if r := settled(t, srv, "/payments", "K"); r.code != http.StatusConflict || !strings.Contains(r.body, "not stored") {
		t.Errorf("retry after the client left between the hints and the answer: %d %q replayed %q, want 409: no answer was given",
			r.code, r.body, r.header.Get(echolock.HeaderIdempotentReplayed))
	}
}
