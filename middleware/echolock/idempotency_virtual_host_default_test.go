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

// TestIdempotencyVirtualHostAndDefaultRouter: a host without a router of its
// own is served by the default router, whose route of a path is another
// route, with another handler, than a virtual host's route of the same path:
// a key the default router's route answered is refused there (422), not
// answered with the default route's stored response (the virtual host's
// handler never running), and the other way round. A record an earlier
// release stored for the default router's route is still replayed to it.
func TestIdempotencyVirtualHostAndDefaultRouter(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	var runsA, runsDefault atomic.Int64
	e := echo.New()
	countingPOST(e.Host("shop-a.example"), "/orders/:id/pay", &runsA, "paid at shop a", echolock.Idempotency(store))
	countingPOST(e, "/orders/:id/pay", &runsDefault, "paid", echolock.Idempotency(store))

	post := func(host, key string) *httptest.ResponseRecorder { return postTo(e, host, "/orders/7/pay", key) }
	if r := post("other.example", "K"); r.Code != http.StatusCreated || r.Body.String() != "paid" {
		t.Fatalf("default router: %d %q", r.Code, r.Body.String())
	}
	if r := post("shop-a.example", "K"); r.Code != http.StatusUnprocessableEntity || runsA.Load() != 0 {
		t.Errorf("shop a with the key the default router's route used: %d %q (replayed %q), shop a's handler ran %d times; want 422, not the default route's answer",
			r.Code, r.Body.String(), r.Header().Get(echolock.HeaderIdempotentReplayed), runsA.Load())
	}
	if r := post("shop-a.example", "L"); r.Code != http.StatusCreated || r.Body.String() != "paid at shop a" {
		t.Fatalf("shop a: %d %q", r.Code, r.Body.String())
	}
	if r := post("other.example", "L"); r.Code != http.StatusUnprocessableEntity || runsDefault.Load() != 1 {
		t.Errorf("default router with the key shop a used: %d %q (replayed %q), its handler ran %d times; want 422, not shop a's answer",
			r.Code, r.Body.String(), r.Header().Get(echolock.HeaderIdempotentReplayed), runsDefault.Load())
	}
	if r := post("another.example", "K"); r.Code != http.StatusCreated || r.Body.String() != "paid" ||
		r.Header().Get(echolock.HeaderIdempotentReplayed) != "true" || runsDefault.Load() != 1 {
		t.Errorf("default router, another host: %d %q replayed %q after %d runs, want the replay",
			r.Code, r.Body.String(), r.Header().Get(echolock.HeaderIdempotentReplayed), runsDefault.Load())
	}
	// A record an earlier release stored for the default router's route
	// carries the fingerprint of its path alone, which shop a's router also
	// serves: it does not say whose it is, and is refused on shop a (see
	// TestIdempotencyVirtualHostEarlierRecordAmbiguous).
	storeEarlier(t, store, "OLD", "paid, earlier release",
		[]byte(http.MethodPost), []byte("/orders/:id/pay"), []byte("/orders/7/pay"), nil)
	if r := post("shop-a.example", "OLD"); r.Code != http.StatusUnprocessableEntity || runsA.Load() != 1 {
		t.Errorf("shop a, a key an earlier release stored for a path two routers serve: %d %q after %d runs, want 422, not the default route's answer", r.Code, r.Body.String(), runsA.Load())
	}
}
