package echolock_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
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
	node := redistest.Server(t)
	store, err := idempotency.NewStore(node.Client(t), idempotency.WithPrefix(redistest.Prefix(t)),
		idempotency.WithMaxBytesPerScope(512))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
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
