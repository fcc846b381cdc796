package echolock_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
	"github.com/scriptlock/scriptlock/middleware/internal/core"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// BenchmarkLockMiddleware measures the per-request cost of the lock middleware
// (uncontended: every request has its own key) against the same handler
// without it, through Echo's ServeHTTP, and counts Redis round trips per
// request (client side) and scripts run per request (server side).
func BenchmarkLockMiddleware(b *testing.B) {
	env := mwtest.New(b)
	handler := func(c echo.Context) error { return c.NoContent(http.StatusNoContent) }
	for _, bc := range []struct {
		name string
		mw   []echo.MiddlewareFunc
	}{
		{"none", nil},
		{"watchdog", []echo.MiddlewareFunc{echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: env.LockFunc()})}},
		{"lease", []echo.MiddlewareFunc{echolock.LockWithConfig(echolock.LockConfig{KeyPrefix: env.Prefix, Lock: env.LockFunc(scriptlock.WithLease(30 * time.Second))})}},
		{"idempotency", []echo.MiddlewareFunc{echolock.Idempotency(mustStore(b, env))}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			e := echo.New()
			e.POST("/orders/:id", handler, bc.mw...)
			var n atomic.Int64
			run := core.NewOwnerID()[:8] // keys unique across -count runs: no replays
			rt0, sc0 := env.Redis.RoundTrips(), env.ScriptCalls(b)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					id := strconv.FormatInt(n.Add(1), 10)
					req := httptest.NewRequest(http.MethodPost, "/orders/"+id, nil)
					req.Header.Set("Idempotency-Key", run+"-"+id)
					rec := httptest.NewRecorder()
					e.ServeHTTP(rec, req)
					if rec.Code != http.StatusNoContent {
						b.Fatalf("status %d: %s", rec.Code, rec.Body)
					}
				}
			})
			b.StopTimer()
			ops := float64(b.N)
			b.ReportMetric(float64(env.Redis.RoundTrips()-rt0)/ops, "roundtrips/op")
			b.ReportMetric(float64(env.ScriptCalls(b)-sc0)/ops, "scripts/op")
		})
	}
}

func mustStore(b *testing.B, env *mwtest.Env) *idempotency.Store {
	s, err := idempotency.NewStore(env.Redis, idempotency.WithPrefix(env.Prefix+"idem:"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	return s
}
