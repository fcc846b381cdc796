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

// TestIdempotencyVirtualHostScope: each virtual host's Echo runs its own
// middleware, which cannot tell which Echo served a request, so two hosts
// with the same route on one store share records unless their Scope names
// the host. With such a Scope a key one host answered is not replayed on
// the other, whose handler runs, and a retry on the same host still gets
// the replay.
func TestIdempotencyVirtualHostScope(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	byHost := func(c *echo.Context) string { return c.Request().Host + "|" + echolock.CredentialScope(c) }
	shop := func(runs *atomic.Int64, body string) *echo.Echo {
		e := echo.New()
		e.POST("/orders/:id/pay", func(c *echo.Context) error {
			runs.Add(1)
			return c.String(http.StatusCreated, body)
		}, echolock.IdempotencyWithConfig(echolock.IdempotencyConfig{Store: store, Scope: byHost}))
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
	if r := post("shop-b.example"); r.Code != http.StatusCreated || r.Body.String() != "paid at shop b" ||
		r.Header().Get(echolock.HeaderIdempotentReplayed) != "" || runsB.Load() != 1 {
		t.Errorf("shop b with the key shop a used: %d %q (replayed %q) after %d runs, want its own answer",
			r.Code, r.Body.String(), r.Header().Get(echolock.HeaderIdempotentReplayed), runsB.Load())
	}
	if r := post("shop-a.example"); r.Body.String() != "paid at shop a" ||
		r.Header().Get(echolock.HeaderIdempotentReplayed) != "true" || runsA.Load() != 1 {
		t.Errorf("retry on shop a: %d %q replayed %q after %d runs, want shop a's answer replayed",
			r.Code, r.Body.String(), r.Header().Get(echolock.HeaderIdempotentReplayed), runsA.Load())
	}
}
