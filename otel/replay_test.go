package scriptlockotel_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// replayAcquires is how many locks replayScenario takes: the first request
// runs under the lock, its replay does not reach the lock.
const replayAcquires = 1

// replayScenario sends one request with an Idempotency-Key twice through
// Idempotency and lock middleware that report to the Observer.
func replayScenario(t *testing.T, ctx context.Context, tm *telemetry, c *scriptlock.Client) {
	t.Helper()
	node := redistest.Server(t)
	store, err := idempotency.NewStore(node.Client(t), idempotency.WithPrefix(redistest.Prefix(t)),
		idempotency.WithTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	e.Use(echolock.IdempotencyWithConfig(echolock.IdempotencyConfig{Store: store, OnOutcome: tm.obs.MiddlewareOutcome}))
	e.POST("/charges/:id", func(c echo.Context) error { return c.String(http.StatusCreated, "charged") },
		echolock.LockWithConfig(echolock.LockConfig{Client: c, OnOutcome: tm.obs.MiddlewareOutcome}))
	srv := httptest.NewServer(e)
	defer srv.Close()
	for i, want := range []string{"", "true"} {
		req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/charges/7", strings.NewReader(`{"amount":5}`))
		req.Header.Set("Idempotency-Key", `"charge-7"`)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated || resp.Header.Get(echolock.HeaderIdempotentReplayed) != want {
			t.Fatalf("request %d: %d replayed=%q", i, resp.StatusCode, resp.Header.Get(echolock.HeaderIdempotentReplayed))
		}
	}
}

func checkMiddlewareMetrics(t *testing.T, got map[string]metricdata.Metrics) {
	t.Helper()
	wantEqual(t, "middleware.requests", sums(t, got["scriptlock.middleware.requests"]), map[string]int64{
		"scriptlock.outcome=executed": 1,
		"scriptlock.outcome=replayed": 1,
		"scriptlock.outcome=locked":   1,
	})
}
