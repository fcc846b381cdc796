package echolock_test

// Echo v4 only: Echo v5 has no e.Host.
//echov5gen:v4only

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotencyVirtualHostRoute: the same path on two virtual hosts
// (Echo's e.Host) are two routes, each with its own handler: a key one of
// them answered is refused on the other (422) as on another path, not
// answered with the other host's stored response, which would tell the
// client a request ran that never did. A retry on the same host still gets
// the replay, and hosts the default router serves share its route.
func TestIdempotencyVirtualHostRoute(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	var runsA, runsB, runsDefault atomic.Int64
	e := echo.New()
	countingPOST(e.Host("shop-a.example"), "/orders/:id/pay", &runsA, "paid at shop a", echolock.Idempotency(store))
	countingPOST(e.Host("shop-b.example"), "/orders/:id/pay", &runsB, "paid at shop b", echolock.Idempotency(store))
	countingPOST(e, "/orders/:id/pay", &runsDefault, "paid", echolock.Idempotency(store))

	post := func(host, key string) *httptest.ResponseRecorder { return postTo(e, host, "/orders/7/pay", key) }
	if r := post("shop-a.example", "K"); r.Code != http.StatusCreated || r.Body.String() != "paid at shop a" {
		t.Fatalf("shop a: %d %q", r.Code, r.Body.String())
	}
	if r := post("shop-b.example", "K"); r.Code != http.StatusUnprocessableEntity || runsB.Load() != 0 {
		t.Errorf("shop b with the key shop a used: %d %q (replayed %q), shop b's handler ran %d times; want 422, not shop a's answer",
			r.Code, r.Body.String(), r.Header().Get(echolock.HeaderIdempotentReplayed), runsB.Load())
	}
	if r := post("shop-a.example", "K"); r.Code != http.StatusCreated || r.Body.String() != "paid at shop a" ||
		r.Header().Get(echolock.HeaderIdempotentReplayed) != "true" || runsA.Load() != 1 {
		t.Errorf("retry on shop a: %d %q replayed %q after %d runs, want shop a's answer replayed",
			r.Code, r.Body.String(), r.Header().Get(echolock.HeaderIdempotentReplayed), runsA.Load())
	}
	// A record an earlier release stored for a virtual host's route carries
	// the fingerprint of its path alone, which three routers serve here: it
	// does not say whose it is, and is refused (see
	// TestIdempotencyVirtualHostEarlierRecordAmbiguous).
	storeEarlier(t, store, "OLD", "paid at shop a, earlier release",
		[]byte(http.MethodPost), []byte("/orders/:id/pay"), []byte("/orders/7/pay"), nil)
	if r := post("shop-b.example", "OLD"); r.Code != http.StatusUnprocessableEntity || runsB.Load() != 0 {
		t.Errorf("shop b, a key an earlier release stored for a path three routers serve: %d %q after %d runs, want 422", r.Code, r.Body.String(), runsB.Load())
	}
	// Hosts without a router of their own share the default router's route.
	if r := post("other.example", "D"); r.Code != http.StatusCreated || r.Body.String() != "paid" {
		t.Fatalf("default router: %d %q", r.Code, r.Body.String())
	}
	if r := post("another.example", "D"); r.Code != http.StatusCreated || r.Header().Get(echolock.HeaderIdempotentReplayed) != "true" || runsDefault.Load() != 1 {
		t.Errorf("default router, another host: %d %q replayed %q after %d runs, want the replay",
			r.Code, r.Body.String(), r.Header().Get(echolock.HeaderIdempotentReplayed), runsDefault.Load())
	}
}
