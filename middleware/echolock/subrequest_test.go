package echolock_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestSubRequestsDoNotShareOwner: a locked handler that serves requests of
// its own through the router (a batch endpoint) with its request's context
// makes requests other than its own: two of them on one order exclude each
// other, as any two requests do. The nested middleware's owner reuse, meant
// for two lock middlewares in the chain of one request, took the batch's
// owner for both, so they re-entered one lock and ran at once.
func TestSubRequestsDoNotShareOwner(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	locks := env.LockFunc()
	e := echo.New()
	var running, most atomic.Int64
	e.POST("/orders/:id", func(c echo.Context) error {
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(150 * time.Millisecond)
		return c.NoContent(http.StatusNoContent)
	}, echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix + "order:", Lock: locks, Wait: 5 * time.Second}))
	e.POST("/batches/:id", func(c echo.Context) error {
		var wg sync.WaitGroup
		codes := make([]int, 2)
		for i := range codes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rec := httptest.NewRecorder()
				e.ServeHTTP(rec, httptest.NewRequest("POST", "/orders/7", nil).WithContext(c.Request().Context()))
				codes[i] = rec.Code
			}()
		}
		wg.Wait()
		for _, code := range codes {
			if code != http.StatusNoContent {
				return c.NoContent(code)
			}
		}
		return c.NoContent(http.StatusNoContent)
	}, echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix + "batch:", Lock: locks}))
	srv := serve(t, e)
	if r := do(t, srv, "POST", "/batches/b1", ""); r.code != http.StatusNoContent {
		t.Fatalf("batch: %d %s, want 204", r.code, r.body)
	}
	if n := most.Load(); n != 1 {
		t.Errorf("%d requests on order 7 ran at once under its lock, want 1", n)
	}
}
