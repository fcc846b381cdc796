package echolock_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/echolock"
)

// TestIdempotencyPanicAfterHandlerReleases: a panic after the handler
// answered, before its answer was stored (here in StoreStatus), releases
// the key, so the retry runs; the claim was kept and renewed, and every
// retry got 409 until the store closed.
func TestIdempotencyPanicAfterHandlerReleases(t *testing.T) {
	t.Parallel()
	var runs, checks atomic.Int64
	storeStatus := func(status int) bool {
		if checks.Add(1) == 1 {
			panic("predicate bug")
		}
		return echolock.FinalStatus(status)
	}
	srv, _ := idemServer(t, echolock.IdempotencyConfig{StoreStatus: storeStatus}, func(c echo.Context) error {
		runs.Add(1)
		return c.String(http.StatusCreated, "charged")
	})
	if r := do(t, srv, "POST", "/charges", "{}", "Idempotency-Key", "p"); runs.Load() != 1 {
		t.Fatalf("first: %d %q, handler runs %d; want it run", r.code, r.body, runs.Load())
	}
	if r := do(t, srv, "POST", "/charges", "{}", "Idempotency-Key", "p"); r.code != http.StatusCreated || runs.Load() != 2 {
		t.Errorf("retry after the panic: %d %q (runs %d), want it to run", r.code, r.body, runs.Load())
	}
}

// TestIdempotencyOutcomePanicReleases: a panic in OnOutcome when it is told
// that a claimed request runs releases the key, so the retry runs; the claim
// was neither completed nor released, and was renewed for as long as the
// process ran.
func TestIdempotencyOutcomePanicReleases(t *testing.T) {
	t.Parallel()
	var runs, executed atomic.Int64
	outcome := func(_ context.Context, o scriptlock.RequestOutcome) {
		if o == scriptlock.RequestExecuted && executed.Add(1) == 1 {
			panic("metrics bug")
		}
	}
	srv, _ := idemServer(t, echolock.IdempotencyConfig{OnOutcome: outcome}, func(c echo.Context) error {
		runs.Add(1)
		return c.String(http.StatusCreated, "charged")
	})
	if r := do(t, srv, "POST", "/charges", "{}", "Idempotency-Key", "o"); r.code != http.StatusInternalServerError {
		t.Fatalf("first: %d %q, want the panic's 500", r.code, r.body)
	}
	if r := do(t, srv, "POST", "/charges", "{}", "Idempotency-Key", "o"); r.code != http.StatusCreated || runs.Load() != 1 {
		t.Errorf("retry after the panic: %d %q (runs %d), want it to run", r.code, r.body, runs.Load())
	}
}
