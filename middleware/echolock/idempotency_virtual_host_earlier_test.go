package echolock_test

// Echo v4 only: Echo v5 has no e.Host.
//echov5gen:v4only

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/core"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotencyVirtualHostEarlierRecordAmbiguous: a record an earlier
// release stored for a route path that two routers of the Echo serve (a
// virtual host's and the default router's) carries the fingerprint of the
// path alone, which does not say which host's handler answered: it is
// refused (422) on either router, not replayed to another host's request,
// which would hand one tenant another's answer and keep its handler from
// running. A path only one router serves, or a fingerprint that counts the
// Host header, says whose record it is: that record is still replayed.
func TestIdempotencyVirtualHostEarlierRecordAmbiguous(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	var runsA, runsDefault, runsRefund atomic.Int64
	e := echo.New()
	a := e.Host("shop-a.example")
	countingPOST(a, "/orders/:id/pay", &runsA, "paid at shop a", echolock.Idempotency(store))
	countingPOST(a, "/refunds/:id", &runsRefund, "refunded at shop a", echolock.Idempotency(store))
	countingPOST(e, "/orders/:id/pay", &runsDefault, "paid", echolock.Idempotency(store))

	// Shop a's answer, stored by an earlier release under its path alone.
	storeEarlier(t, store, "OLD", "paid at shop a, earlier release",
		[]byte(http.MethodPost), []byte("/orders/:id/pay"), []byte("/orders/7/pay"), nil)
	if r := postTo(e, "other.example", "/orders/7/pay", "OLD"); r.Code != http.StatusUnprocessableEntity || runsDefault.Load() != 0 {
		t.Errorf("default router, a key an earlier release stored for a path two routers serve: %d %q (replayed %q), handler ran %d times; want 422, not another host's answer",
			r.Code, r.Body.String(), r.Header().Get(echolock.HeaderIdempotentReplayed), runsDefault.Load())
	}
	if r := postTo(e, "shop-a.example", "/orders/7/pay", "OLD"); r.Code != http.StatusUnprocessableEntity || runsA.Load() != 0 {
		t.Errorf("shop a, a key an earlier release stored for a path two routers serve: %d %q (replayed %q), handler ran %d times; want 422: the record does not say whose it is",
			r.Code, r.Body.String(), r.Header().Get(echolock.HeaderIdempotentReplayed), runsA.Load())
	}

	// A path only shop a serves: the earlier record can only be shop a's.
	storeEarlier(t, store, "OLDR", "refunded at shop a, earlier release",
		[]byte(http.MethodPost), []byte("/refunds/:id"), []byte("/refunds/3"), nil)
	if r := postTo(e, "shop-a.example", "/refunds/3", "OLDR"); r.Code != http.StatusCreated ||
		r.Body.String() != "refunded at shop a, earlier release" || runsRefund.Load() != 0 {
		t.Errorf("retry of a request an earlier release stored on a path one router serves: %d %q after %d runs, want its answer replayed",
			r.Code, r.Body.String(), runsRefund.Load())
	}

	// Applied before routing (e.Pre), the route path is empty, which no
	// router has: the record does not say whose it is.
	var runsPre atomic.Int64
	ep := echo.New()
	ep.Pre(echolock.Idempotency(store))
	countingPOST(ep.Host("shop-a.example"), "/orders/:id/pay", &runsPre, "paid at shop a")
	countingPOST(ep, "/orders/:id/pay", &runsPre, "paid")
	storeEarlier(t, store, "OLDP", "paid at shop a, earlier release",
		[]byte(http.MethodPost), []byte(""), []byte("/orders/7/pay"), nil)
	if r := postTo(ep, "other.example", "/orders/7/pay", "OLDP"); r.Code != http.StatusUnprocessableEntity || runsPre.Load() != 0 {
		t.Errorf("before routing, a key an earlier release stored on another host: %d %q (replayed %q), handler ran %d times; want 422",
			r.Code, r.Body.String(), r.Header().Get(echolock.HeaderIdempotentReplayed), runsPre.Load())
	}

	// A fingerprint that counts Host says whose record it is, also on a
	// path two routers serve.
	var runsH atomic.Int64
	eh := echo.New()
	byHost := echolock.IdempotencyWithConfig(echolock.IdempotencyConfig{Store: store, FingerprintHeaders: []string{"Host"}})
	countingPOST(eh.Host("shop-a.example"), "/orders/:id/pay", &runsH, "paid at shop a", byHost)
	countingPOST(eh, "/orders/:id/pay", &runsH, "paid", byHost)
	hostPart := func(host string) []byte {
		return core.FieldsPart("headers", []string{"Host"}, func(string) []string { return []string{host} })
	}
	storeEarlier(t, store, "OLDH", "paid at shop a, earlier release",
		[]byte(http.MethodPost), []byte("/orders/:id/pay"), []byte("/orders/7/pay"), nil, hostPart("shop-a.example"))
	if r := postTo(eh, "shop-a.example", "/orders/7/pay", "OLDH"); r.Code != http.StatusCreated ||
		r.Body.String() != "paid at shop a, earlier release" || runsH.Load() != 0 {
		t.Errorf("retry of a request an earlier release stored with its Host counted: %d %q after %d runs, want its answer replayed",
			r.Code, r.Body.String(), runsH.Load())
	}
	if r := postTo(eh, "other.example", "/orders/7/pay", "OLDH"); r.Code != http.StatusUnprocessableEntity || runsH.Load() != 0 {
		t.Errorf("another host, a key an earlier release stored with shop a's Host counted: %d %q, handler ran %d times; want 422",
			r.Code, r.Body.String(), runsH.Load())
	}
}
