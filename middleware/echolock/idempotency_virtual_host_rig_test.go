package echolock_test

// The helpers of the virtual host tests: Echo v4's e.Host, which Echo v5
// does not have (each virtual host is an Echo of its own there).
//echov5gen:v4only

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// router is an Echo or a group of its routes (a virtual host's).
type router interface {
	POST(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route
}

// countingPOST adds to r a POST route of path whose handler counts its
// runs in runs and answers 201 with body.
func countingPOST(r router, path string, runs *atomic.Int64, body string, m ...echo.MiddlewareFunc) {
	r.POST(path, func(c echo.Context) error {
		runs.Add(1)
		return c.String(http.StatusCreated, body)
	}, m...)
}

// postTo is e's answer to a POST of path to host with the Idempotency-Key key.
func postTo(e *echo.Echo, host, path, key string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, nil)
	req.Host = host
	req.Header.Set(echolock.HeaderIdempotencyKey, key)
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	return rec
}

// storeEarlier stores under key, as an earlier release did, a 201 with
// body for the request whose fingerprint parts are parts.
func storeEarlier(t *testing.T, store *idempotency.Store, key, body string, parts ...[]byte) {
	t.Helper()
	ctx := context.Background()
	res, err := store.Reserve(ctx, idempotency.AnonymousScope, key, idempotency.Fingerprint(parts...))
	if err != nil || res.State != idempotency.Claimed {
		t.Fatalf("reserve as an earlier release: %+v %v", res, err)
	}
	sr := idempotency.StoredResponse{Status: http.StatusCreated, Body: []byte(body)}
	if ok, err := res.Claim.Complete(ctx, sr.Encode()); !ok || err != nil {
		t.Fatalf("complete as an earlier release: %v %v", ok, err)
	}
}
