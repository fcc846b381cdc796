package echolock_test

// Echo v5 only: its virtual hosts are Echo instances of their own behind
// echo.NewVirtualHostHandler (Echo v4's e.Host, which the v4 package's
// virtual host tests use, is gone).

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v5"

	echolock "github.com/scriptlock/scriptlock/middleware/echolock/v5"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotencyVirtualHostFingerprintHost: each virtual host's Echo runs
// its own middleware, which cannot tell which Echo served a request, so two
// hosts with the same route on one store share records unless Host counts
// in the fingerprint (FingerprintHeaders), as docs/middleware.md says for an
// Echo per host. With it, as with Echo v4's e.Host, a key one host answered
// is refused on the other (422), whose handler does not run, rather than
// answered with the first host's stored response, and a retry on the same
// host still gets the replay.
func TestIdempotencyVirtualHostFingerprintHost(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	shop := func(runs *atomic.Int64, body string) *echo.Echo {
		e := echo.New()
		e.POST("/orders/:id/pay", func(c *echo.Context) error {
			runs.Add(1)
			return c.String(http.StatusCreated, body)
		}, echolock.IdempotencyWithConfig(echolock.IdempotencyConfig{Store: store, FingerprintHeaders: []string{"Host"}}))
		return e
	}
	var runsA, runsB atomic.Int64
	e := echo.NewVirtualHostHandler(map[string]*echo.Echo{
		"shop-a.example": shop(&runsA, "paid at shop a"),
		"shop-b.example": shop(&runsB, "paid at shop b"),
	})
	post := func(host string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/orders/7/pay", nil)
		req.Host = host
		req.Header.Set(echolock.HeaderIdempotencyKey, "K")
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		return rec
	}
	if r := post("shop-a.example"); r.Code != http.StatusCreated || r.Body.String() != "paid at shop a" {
		t.Fatalf("shop a: %d %q", r.Code, r.Body.String())
	}
	if r := post("shop-b.example"); r.Code != http.StatusUnprocessableEntity || runsB.Load() != 0 {
		t.Errorf("shop b with the key shop a used: %d %q (replayed %q), shop b's handler ran %d times; want 422, not shop a's answer",
			r.Code, r.Body.String(), r.Header().Get(echolock.HeaderIdempotentReplayed), runsB.Load())
	}
	if r := post("shop-a.example"); r.Body.String() != "paid at shop a" ||
		r.Header().Get(echolock.HeaderIdempotentReplayed) != "true" || runsA.Load() != 1 {
		t.Errorf("retry on shop a: %d %q replayed %q after %d runs, want shop a's answer replayed",
			r.Code, r.Body.String(), r.Header().Get(echolock.HeaderIdempotentReplayed), runsA.Load())
	}
}
