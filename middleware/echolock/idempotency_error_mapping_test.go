package echolock_test

import (
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

var errCardDeclined = errors.New("card declined")

// TestIdempotencyOuterErrorMapping: a handler error that is no
// *echo.HTTPError reaches a middleware further out that maps it to an answer
// (the client gets that answer, not Echo's 500), and the key is released
// rather than a different answer stored: the retry runs again and is mapped
// alike. An *echo.HTTPError, the handler's own answer, is still stored.
func TestIdempotencyOuterErrorMapping(t *testing.T) {
	t.Parallel()
	store := plainStore(t, idempotency.WithTimeout(time.Second))
	var runs, seen atomic.Int64
	e := echo.New()
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			err := next(c)
			if errors.Is(err, errCardDeclined) {
				seen.Add(1)
				return c.JSON(http.StatusPaymentRequired, map[string]string{"code": "card_declined"})
			}
			return err
		}
	})
	e.POST("/charges", func(c echo.Context) error {
		runs.Add(1)
		return errCardDeclined
	}, echolock.Idempotency(store))
	e.POST("/refunds", func(c echo.Context) error {
		runs.Add(1)
		return echo.NewHTTPError(http.StatusNotFound, "no such charge")
	}, echolock.Idempotency(store))
	srv := serve(t, e)

	for i := range 2 {
		r := do(t, srv, "POST", "/charges", "b", "Idempotency-Key", "k")
		if r.code != http.StatusPaymentRequired || r.body != "{\"code\":\"card_declined\"}\n" || r.header.Get(echolock.HeaderIdempotentReplayed) != "" {
			t.Errorf("attempt %d: %d %q replayed=%q, want the mapped 402", i+1, r.code, r.body, r.header.Get(echolock.HeaderIdempotentReplayed))
		}
	}
	if n, m := runs.Load(), seen.Load(); n != 2 || m != 2 {
		t.Errorf("handler ran %d times, mapping saw %d errors; want 2 and 2 (nothing stored, the retry runs)", n, m)
	}
	first := do(t, srv, "POST", "/refunds", "b", "Idempotency-Key", "k2")
	again := do(t, srv, "POST", "/refunds", "b", "Idempotency-Key", "k2")
	if first.code != http.StatusNotFound || again.code != http.StatusNotFound || again.body != first.body || again.header.Get(echolock.HeaderIdempotentReplayed) != "true" {
		t.Errorf("HTTPError: %d %q then %d %q replayed=%q, want the 404 stored and replayed", first.code, first.body, again.code, again.body, again.header.Get(echolock.HeaderIdempotentReplayed))
	}
}
