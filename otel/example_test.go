package scriptlockotel_test

import (
	"log"

	"github.com/labstack/echo/v4"
	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	scriptlockotel "github.com/scriptlock/scriptlock/otel"
)

// Metrics and spans for every lock of a Client, and request outcomes of the
// Echo lock middleware, on the global OpenTelemetry providers.
func Example() {
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{"127.0.0.1:6379"}})
	if err != nil {
		log.Fatal(err)
	}
	obs, err := scriptlockotel.New()
	if err != nil {
		log.Fatal(err)
	}
	client, err := scriptlock.New(rc, scriptlock.WithObserver(obs))
	if err != nil {
		log.Fatal(err)
	}
	e := echo.New()
	e.POST("/orders/:id", func(c echo.Context) error { return c.NoContent(204) },
		echolock.LockWithConfig(echolock.LockConfig{Client: client, OnOutcome: obs.MiddlewareOutcome}))
}
