package echolock_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// outcomes collects what OnOutcome reports.
type outcomes struct {
	mu  sync.Mutex
	got []scriptlock.RequestOutcome
}

func (o *outcomes) report(_ context.Context, out scriptlock.RequestOutcome) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.got = append(o.got, out)
}

func (o *outcomes) take() []scriptlock.RequestOutcome {
	o.mu.Lock()
	defer o.mu.Unlock()
	got := o.got
	o.got = nil
	return got
}

func TestOnOutcome(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc()
	var out outcomes
	e := echo.New()
	h := func(c echo.Context) error { return c.NoContent(204) }
	e.POST("/closed/:id", h, echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: locks, OnOutcome: out.report}))
	e.POST("/open/:id", h, echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: locks, FailOpen: true, OnOutcome: out.report}))
	srv := serve(t, e)

	if r := do(t, srv, "POST", "/closed/1", ""); r.code != 204 {
		t.Fatalf("locked: %d", r.code)
	}
	hctx := scriptlock.WithOwner(context.Background(), "holder")
	if _, err := env.Lock(t, locks, env.Prefix+"2").Lock(hctx); err != nil {
		t.Fatal(err)
	}
	if r := do(t, srv, "POST", "/closed/2", ""); r.code != http.StatusConflict {
		t.Fatalf("contended: %d", r.code)
	}
	if r := do(t, srv, "POST", "/closed/"+strings.Repeat("x", 300), ""); r.code != http.StatusBadRequest {
		t.Fatalf("invalid key: %d", r.code)
	}
	want := []scriptlock.RequestOutcome{scriptlock.RequestLocked, scriptlock.RequestContended, scriptlock.RequestKeyInvalid}
	if got := out.take(); !slices.Equal(got, want) {
		t.Errorf("outcomes %v, want %v", got, want)
	}
	env.Node.Kill()
	do(t, srv, "POST", "/closed/3", "")
	do(t, srv, "POST", "/open/3", "")
	want = []scriptlock.RequestOutcome{scriptlock.RequestRedisDown, scriptlock.RequestFailOpen}
	if got := out.take(); !slices.Equal(got, want) {
		t.Errorf("outcomes with Redis down %v, want %v", got, want)
	}
}

func TestIdempotencyOnOutcome(t *testing.T) {
	t.Parallel()
	var out outcomes
	srv, _ := idemServer(t, echolock.IdempotencyConfig{OnOutcome: out.report}, func(c echo.Context) error {
		return c.NoContent(201)
	})
	do(t, srv, "POST", "/charges", "a", "Idempotency-Key", "k1")
	do(t, srv, "POST", "/charges", "a", "Idempotency-Key", "k1")
	do(t, srv, "POST", "/charges", "b", "Idempotency-Key", "k1")
	do(t, srv, "POST", "/charges", "a", "Idempotency-Key", `"bad`)
	want := []scriptlock.RequestOutcome{scriptlock.RequestExecuted, scriptlock.RequestReplayed,
		scriptlock.RequestIdempotencyConflict, scriptlock.RequestKeyInvalid}
	if got := out.take(); !slices.Equal(got, want) {
		t.Errorf("outcomes %v, want %v", got, want)
	}
}

func TestIdempotencyOnOutcomeOverBudget(t *testing.T) {
	t.Parallel()
	store := plainStore(t, idempotency.WithMaxBytesPerScope(512))
	var out outcomes
	e := echo.New()
	e.POST("/charges", func(c echo.Context) error {
		return c.String(http.StatusCreated, strings.Repeat("x", 1024))
	}, echolock.IdempotencyWithConfig(echolock.IdempotencyConfig{Store: store, OnOutcome: out.report}))
	srv := serve(t, e)
	do(t, srv, "POST", "/charges", "", "Idempotency-Key", "k1", "Authorization", "Bearer alice")
	if r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "k2", "Authorization", "Bearer alice"); r.code != http.StatusTooManyRequests {
		t.Fatalf("second key over the scope's budget: %d, want 429", r.code)
	}
	want := []scriptlock.RequestOutcome{scriptlock.RequestExecuted, scriptlock.RequestOverBudget}
	if got := out.take(); !slices.Equal(got, want) {
		t.Errorf("outcomes %v, want %v", got, want)
	}
}

// TestIdempotencyOnOutcomeBodyRefused: a request refused for its body (over
// MaxBodyBytes or a body limit in front: 413; unreadable: 400) is reported
// too, so that the refusals show in the metrics.
func TestIdempotencyOnOutcomeBodyRefused(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	var out outcomes
	e := echo.New()
	h := func(c echo.Context) error { return c.NoContent(http.StatusCreated) }
	idem := echolock.IdempotencyWithConfig(echolock.IdempotencyConfig{Store: env.Store(t), MaxBodyBytes: 16, OnOutcome: out.report})
	e.POST("/charges", h, idem)
	e.POST("/limited", h, func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			c.Request().Body = http.MaxBytesReader(c.Response(), c.Request().Body, 8)
			return next(c)
		}
	}, idem)
	for _, c := range []struct {
		path string
		body io.Reader
		want int
	}{
		{"/charges", strings.NewReader(strings.Repeat("x", 17)), http.StatusRequestEntityTooLarge},
		{"/limited", strings.NewReader(strings.Repeat("x", 9)), http.StatusRequestEntityTooLarge},
		{"/charges", io.MultiReader(strings.NewReader("x"), iotest.ErrReader(errors.New("connection reset"))), http.StatusBadRequest},
	} {
		req := httptest.NewRequest(http.MethodPost, c.path, c.body)
		req.Header.Set(echolock.HeaderIdempotencyKey, "k1")
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code != c.want {
			t.Errorf("%s: %d %q, want %d", c.path, rec.Code, rec.Body.String(), c.want)
		}
		want := []scriptlock.RequestOutcome{scriptlock.RequestBodyRefused}
		if got := out.take(); !slices.Equal(got, want) {
			t.Errorf("%s (%d): outcomes %v, want %v", c.path, c.want, got, want)
		}
	}
}

// TestIdempotencyOnOutcomeNotReplayable: a duplicate of a completed request
// whose response was too large to store gets 409 and no replay, so it is
// counted as a conflict, not as replayed.
func TestIdempotencyOnOutcomeNotReplayable(t *testing.T) {
	t.Parallel()
	var out outcomes
	srv, _ := idemServer(t, echolock.IdempotencyConfig{MaxResponseBytes: 10, OnOutcome: out.report}, func(c echo.Context) error {
		return c.String(http.StatusOK, strings.Repeat("x", 11))
	})
	do(t, srv, "POST", "/charges", "a", "Idempotency-Key", "k1")
	if r := do(t, srv, "POST", "/charges", "a", "Idempotency-Key", "k1"); r.code != http.StatusConflict {
		t.Fatalf("duplicate of an unstored response: %d, want 409", r.code)
	}
	want := []scriptlock.RequestOutcome{scriptlock.RequestExecuted, scriptlock.RequestIdempotencyConflict}
	if got := out.take(); !slices.Equal(got, want) {
		t.Errorf("outcomes %v, want %v", got, want)
	}
}
