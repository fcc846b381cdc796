package echolock_test

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

func Example() {
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{"127.0.0.1:6379"}})
	if err != nil {
		return
	}
	locks, err := scriptlock.New(rc)
	if err != nil {
		return
	}
	store, err := idempotency.NewStore(rc)
	if err != nil {
		return
	}
	defer store.Close()

	e := echo.New()
	recharge := func(c echo.Context) error {
		fence, _ := scriptlock.Fence(c.Request().Context()) // guard the write: WHERE fence < $fence
		_ = fence
		return c.JSON(http.StatusCreated, map[string]string{"status": "recharged"})
	}
	// Idempotency first (a replay needs no lock), then one request per account at a time.
	e.POST("/accounts/:id/recharge", recharge,
		echolock.IdempotencyWithConfig(echolock.IdempotencyConfig{Store: store, Required: true}),
		echolock.LockWithConfig(echolock.LockConfig{
			KeyLookup: "param:id",
			KeyPrefix: "recharge:",
			Client:    locks,
			Wait:      2 * time.Second,
		}))
	_ = e.Start(":8080")
}
