package echolock_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/exampleredis"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// One request per account at a time, and a retried request answered with
// the first one's response. The example runs against a redis-server the
// package's tests start; in a service, InitAddress is your Redis.
func Example() {
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: exampleredis.Addrs()})
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()
	locks, err := scriptlock.New(rc)
	if err != nil {
		log.Fatal(err)
	}
	defer locks.Close()
	store, err := idempotency.NewStore(rc)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	e := echo.New()
	credits := 0
	recharge := func(c echo.Context) error {
		// Runs under the lock recharge:<id>; its fencing token guards the
		// store: recorded on the row before the read, required by the write
		// (README, Fencing).
		fence, _ := scriptlock.Fence(c.Request().Context())
		credits++
		return c.JSON(http.StatusCreated, map[string]any{"status": "recharged", "fenced": fence > 0})
	}
	// Idempotency first (a replay needs no lock), then the lock.
	e.POST("/accounts/:id/recharge", recharge,
		echolock.IdempotencyWithConfig(echolock.IdempotencyConfig{Store: store, Required: true}),
		echolock.LockWithConfig(echolock.LockConfig{
			KeyLookup: "param:id",
			KeyPrefix: "recharge:",
			Client:    locks,
			Wait:      2 * time.Second,
		}))

	// A service calls e.Start(":8080"); here the same request is sent twice,
	// as a client retrying after a lost answer would.
	for range 2 {
		req := httptest.NewRequest(http.MethodPost, "/accounts/7/recharge", nil)
		req.Header.Set("Authorization", "Bearer alice")
		req.Header.Set(echolock.HeaderIdempotencyKey, "recharge-7-0001")
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		fmt.Printf("%d replayed=%q %s\n", rec.Code, rec.Header().Get(echolock.HeaderIdempotentReplayed), strings.TrimSpace(rec.Body.String()))
	}
	fmt.Println("credits:", credits)
	// Output:
	// 201 replayed="" {"fenced":true,"status":"recharged"}
	// 201 replayed="true" {"fenced":true,"status":"recharged"}
	// credits: 1
}
