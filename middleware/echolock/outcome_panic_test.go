package echolock_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestOnOutcomePanic: OnOutcome gets the outcome of every request the
// middleware does not skip, one whose handler panicked under the lock
// included (locked); it got nothing for it.
func TestOnOutcomePanic(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	var out outcomes
	e := echo.New()
	e.Use(recoverer)
	e.POST("/:id", func(c echo.Context) error { panic("boom") },
		echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: env.LockFunc(), OnOutcome: out.report}))
	srv := serve(t, e)
	if r := do(t, srv, "POST", "/1", ""); r.code != http.StatusInternalServerError {
		t.Fatalf("got %d, want 500 from the recovery middleware", r.code)
	}
	if got, want := out.take(), []scriptlock.RequestOutcome{scriptlock.RequestLocked}; !slices.Equal(got, want) {
		t.Errorf("outcomes %v, want %v", got, want)
	}
}
