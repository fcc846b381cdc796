package echolock_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotencyAndLockEarlyHintsThenAnswerPastEcho: behind Idempotency and
// Lock on one route, a handler that sends 103 Early Hints through Echo's
// response (which takes them for the answer) and then its answer through the
// writer under it (as http.ServeContent does) has that answer's status sent,
// stored and replayed, not one the response bookkeeping of either middleware
// replaced. Both middlewares put their writers under the one bookkeeping the
// handler writes to, whichever Echo version.
func TestIdempotencyAndLockEarlyHintsThenAnswerPastEcho(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	var runs atomic.Int64
	e := echo.New()
	e.POST("/charges/:id", func(c echo.Context) error {
		runs.Add(1)
		c.Response().Header().Set("Link", "</style.css>; rel=preload; as=style")
		c.Response().WriteHeader(http.StatusEarlyHints)
		w := echolock.RawWriter(echolock.EchoResponse(c))
		w.WriteHeader(http.StatusCreated)
		_, err := w.Write([]byte("charged"))
		return err
	}, echolock.Idempotency(store), echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: env.LockFunc()}))
	srv := serve(t, e)
	first := do(t, srv, "POST", "/charges/7", "", "Idempotency-Key", "K")
	if first.code != http.StatusCreated || first.body != "charged" {
		t.Fatalf("first: %d %q, want 201 %q", first.code, first.body, "charged")
	}
	retry := do(t, srv, "POST", "/charges/7", "", "Idempotency-Key", "K")
	if retry.code != http.StatusCreated || retry.body != "charged" || retry.header.Get(echolock.HeaderIdempotentReplayed) != "true" || runs.Load() != 1 {
		t.Errorf("retry: %d %q replayed %q after %d runs, want the 201 replayed",
			retry.code, retry.body, retry.header.Get(echolock.HeaderIdempotentReplayed), runs.Load())
	}
}
