package echolock_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// A handler streams its answer; the client's connection drops after the
// first chunk, so the handler stops and returns the error. The retry with the
// same Idempotency-Key must not get the cut-off body replayed as a complete
// 200, nor run the request again: it gets 409. The stream goes on for up to
// 10 s, so a loaded machine that tells the handler late that its client left
// still finds it streaming.
func TestIdempotencyStreamCutOffNotReplayed(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	var runs atomic.Int64
	done := make(chan struct{}, 1)
	e := echo.New()
	e.POST("/export", func(c echo.Context) error {
		runs.Add(1)
		defer func() { done <- struct{}{} }()
		res := echolock.EchoResponse(c)
		res.Header().Set(echo.HeaderContentType, "text/plain")
		res.WriteHeader(http.StatusOK)
		ctx := c.Request().Context()
		for range 50 {
			if _, err := res.Write([]byte("line\n")); err != nil {
				return err
			}
			res.Flush()
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(200 * time.Millisecond):
			}
		}
		return nil
	}, echolock.Idempotency(store))
	srv := serve(t, e)
	req, _ := http.NewRequest("POST", srv.URL+"/export", nil)
	req.Header.Set("Idempotency-Key", "K")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	srv.CloseClientConnections()
	<-done
	var r result
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		r = do(t, srv, "POST", "/export", "", "Idempotency-Key", "K")
		if !strings.Contains(r.body, "being processed") || time.Now().After(deadline) {
			break // the first request's outcome is in
		}
	}
	if r.code != http.StatusConflict || runs.Load() != 1 {
		t.Fatalf("retry: %d replayed=%q body=%q, handler runs %d; want 409 and one run", r.code, r.header.Get(echolock.HeaderIdempotentReplayed), r.body, runs.Load())
	}
}

// pastEchoAfterLoss answers through the writer under c.Response() (as http.ServeContent
// does) after its lock was lost: it made the charge and answers anyway.
func pastEchoAfterLoss(env *mwtest.Env, t *testing.T, runs *atomic.Int64) echo.HandlerFunc {
	return func(c echo.Context) error {
		runs.Add(1)
		ctx := c.Request().Context()
		env.Node.Do(t, "DEL", env.Mutex(t, env.Prefix+c.Param("id")).Key())
		<-ctx.Done() // the lock is lost
		w := echolock.RawWriter(echolock.EchoResponse(c))
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte("charged"))
		return nil
	}
}

// The lock is lost, but the handler answered through the underlying writer:
// the client gets exactly that answer, with no error body after it.
func TestLockLostAfterAnswerPastEcho(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc(scriptlock.WithWatchdog(3*time.Second, 100*time.Millisecond))
	var runs atomic.Int64
	e := echo.New()
	e.POST("/charges/:id", pastEchoAfterLoss(env, t, &runs),
		echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: locks}))
	srv := serve(t, e)
	if r := do(t, srv, "POST", "/charges/1", ""); r.code != http.StatusCreated || r.body != "charged" {
		t.Fatalf("client got %d %q, want exactly what the handler sent (201 \"charged\")", r.code, r.body)
	}
}

// The same with Idempotency in front: the answer the client got is stored
// and replayed, and the charge runs once.
func TestIdempotencyLockLostAfterAnswerPastEcho(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	locks := env.LockFunc(scriptlock.WithWatchdog(3*time.Second, 100*time.Millisecond))
	var runs atomic.Int64
	e := echo.New()
	e.POST("/charges/:id", pastEchoAfterLoss(env, t, &runs),
		echolock.Idempotency(store),
		echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: locks}))
	srv := serve(t, e)
	if r := do(t, srv, "POST", "/charges/1", "", "Idempotency-Key", "K"); r.code != http.StatusCreated || r.body != "charged" {
		t.Fatalf("first: %d %q", r.code, r.body)
	}
	r := do(t, srv, "POST", "/charges/1", "", "Idempotency-Key", "K")
	if runs.Load() != 1 || r.code != http.StatusCreated || r.body != "charged" || r.header.Get(echolock.HeaderIdempotentReplayed) != "true" {
		t.Fatalf("retry: %d %q replayed=%q, handler runs %d; want the 201 replayed and one run", r.code, r.body, r.header.Get(echolock.HeaderIdempotentReplayed), runs.Load())
	}
}

// A request whose client has gone before the key is reserved is reported as
// canceled, not as a Redis outage: Redis is fine.
func TestIdempotencyClientGoneNotRedisDown(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	var out outcomes
	e := echo.New()
	e.POST("/charges", func(c echo.Context) error { return c.NoContent(http.StatusCreated) },
		echolock.IdempotencyWithConfig(echolock.IdempotencyConfig{Store: store, OnOutcome: out.report}))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequest("POST", "/charges", nil).WithContext(ctx)
	req.Header.Set("Idempotency-Key", "K")
	e.ServeHTTP(httptest.NewRecorder(), req)
	if got := out.take(); !slices.Equal(got, []scriptlock.RequestOutcome{scriptlock.RequestCanceled}) {
		t.Fatalf("outcomes %v, want [%v]", got, scriptlock.RequestCanceled)
	}
}
