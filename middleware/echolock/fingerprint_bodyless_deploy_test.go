package echolock_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// TestIdempotencyFingerprintBodylessEarlierRelease: the media type counts
// only for a request with a body, so a request without one keeps the
// fingerprint an earlier release computed. During a rolling deploy an
// instance of that release finds the record this one stored the same
// request's (it replays it, or answers 409 while it runs), not another
// request's (422), and the request keeps its idempotency.RequestID.
func TestIdempotencyFingerprintBodylessEarlierRelease(t *testing.T) {
	t.Parallel()
	store := plainStore(t, idempotency.WithTimeout(time.Second))
	e := echo.New()
	e.POST("/orders/:id/recharge", func(c echo.Context) error {
		return c.String(http.StatusOK, "credited")
	}, echolock.Idempotency(store))
	srv := serve(t, e)

	if r := do(t, srv, "POST", "/orders/1/recharge", "", "Idempotency-Key", "k"); r.code != http.StatusOK {
		t.Fatalf("first: %d %q", r.code, r.body)
	}
	// What the earlier release reserves for the same request's duplicate:
	// method, route, URI and the empty body, and no earlier fingerprint.
	earlier := idempotency.Fingerprint([]byte("POST"), []byte("/orders/:id/recharge"), []byte("/orders/1/recharge"), nil)
	res, err := store.Reserve(context.Background(), idempotency.AnonymousScope, "k", earlier)
	if err != nil {
		t.Fatal(err)
	}
	if res.State != idempotency.Done {
		t.Errorf("the earlier release reserving the same request without a body: state %v, want Done (%v), not Mismatch (%v)", res.State, idempotency.Done, idempotency.Mismatch)
	}
}
