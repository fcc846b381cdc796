package echolock_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestContendedStatusValidated: a ContendedStatus that is no error status
// fails ToMiddleware, at startup, instead of making every contended request
// panic in net/http ("invalid WriteHeader code") or answer a success.
func TestContendedStatusValidated(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc()
	for _, code := range []int{42, http.StatusOK, 1000, -409} {
		if _, err := (echolock.LockConfig{Lock: locks, KeyPrefix: env.Prefix, ContendedStatus: code}).ToMiddleware(); err == nil {
			t.Errorf("ContendedStatus %d accepted", code)
		}
	}
	holder := env.Lock(t, locks, env.Prefix+"7")
	hctx := scriptlock.WithOwner(context.Background(), "test-holder")
	if _, err := holder.TryLock(hctx, 0); err != nil {
		t.Fatal(err)
	}
	defer holder.Unlock(hctx)
	for _, code := range []int{0, http.StatusLocked, http.StatusServiceUnavailable} {
		mw, err := (echolock.LockConfig{Lock: locks, KeyPrefix: env.Prefix, ContendedStatus: code}).ToMiddleware()
		if err != nil {
			t.Fatalf("ContendedStatus %d: %v", code, err)
		}
		e := echo.New()
		e.POST("/:id", func(c echo.Context) error { return c.NoContent(http.StatusOK) }, mw)
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest("POST", "/7", nil))
		want := code
		if want == 0 {
			want = http.StatusConflict
		}
		if rec.Code != want {
			t.Errorf("ContendedStatus %d: contended request answered %d, want %d", code, rec.Code, want)
		}
	}
}
