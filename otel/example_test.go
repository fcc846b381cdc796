package scriptlockotel_test

import (
	"context"
	"fmt"
	"log"
	"sort"

	"github.com/labstack/echo/v4"
	"github.com/redis/rueidis"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/exampleredis"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	scriptlockotel "github.com/scriptlock/scriptlock/otel"
)

// Metrics and spans for every lock of a Client, and request outcomes of the
// Echo lock middleware. A service passes no provider (the global
// OpenTelemetry providers are used); here an in-memory reader shows which
// metrics one Lock and Unlock record. The example runs against a
// redis-server the package's tests start.
func Example() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	obs, err := scriptlockotel.New(scriptlockotel.WithMeterProvider(mp))
	if err != nil {
		log.Fatal(err)
	}

	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: exampleredis.Addrs()})
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()
	client, err := scriptlock.New(rc, scriptlock.WithObserver(obs))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	e := echo.New()
	e.POST("/orders/:id", func(c echo.Context) error { return c.NoContent(204) },
		echolock.LockWithConfig(echolock.LockConfig{Client: client, OnOutcome: obs.MiddlewareOutcome}))

	ctx := context.Background()
	m, err := client.Mutex("order:42")
	if err != nil {
		log.Fatal(err)
	}
	lctx, err := m.Lock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	if err := m.Unlock(lctx); err != nil {
		log.Fatal(err)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		log.Fatal(err)
	}
	var names []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			names = append(names, m.Name)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Println(n)
	}
	// Output:
	// scriptlock.lock.acquire.attempts
	// scriptlock.lock.acquire.duration
	// scriptlock.lock.held
	// scriptlock.lock.hold.duration
	// scriptlock.lock.release.duration
}
