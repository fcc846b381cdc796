package echolock_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotencyFingerprintHeaders: with FingerprintHeaders, the same key
// and body with another value of a listed header (or the header left out)
// answers 422, as another body does; the same values replay. Names match
// case-insensitively, in any order.
func TestIdempotencyFingerprintHeaders(t *testing.T) {
	t.Parallel()
	var runs atomic.Int64
	srv, _ := idemServer(t, echolock.IdempotencyConfig{FingerprintHeaders: []string{"x-tenant", "X-Currency", "x-currency"}},
		func(c echo.Context) error {
			runs.Add(1)
			return c.String(http.StatusCreated, "charged in "+c.Request().Header.Get("X-Currency"))
		})
	body := `{"amount": 100}`
	first := do(t, srv, "POST", "/charges", body, "Idempotency-Key", "k", "X-Currency", "EUR", "X-Tenant", "a")
	if first.code != http.StatusCreated {
		t.Fatalf("first: %d %s", first.code, first.body)
	}
	for name, hdr := range map[string][]string{
		"other currency":   {"X-Currency", "USD", "X-Tenant", "a"},
		"other tenant":     {"X-Currency", "EUR", "X-Tenant", "b"},
		"currency missing": {"X-Tenant", "a"},
		"currency empty":   {"X-Currency", "", "X-Tenant", "a"},
		"two lines":        {"X-Currency", "EUR", "X-Currency", "EUR", "X-Tenant", "a"},
	} {
		if r := do(t, srv, "POST", "/charges", body, append([]string{"Idempotency-Key", "k"}, hdr...)...); r.code != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d %q, want 422", name, r.code, r.body)
		}
	}
	again := do(t, srv, "POST", "/charges", body, "Idempotency-Key", "k", "x-tenant", "a", "x-currency", "EUR", "X-Unlisted", "1")
	if again.code != http.StatusCreated || again.body != first.body || again.header.Get(echolock.HeaderIdempotentReplayed) != "true" {
		t.Errorf("same headers: %d %q %v, want the replay of %q", again.code, again.body, again.header, first.body)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("handler ran %d times", n)
	}
}

// TestIdempotencyFingerprintHeadersValidated: a name that is not a header
// field name fails ToMiddleware.
func TestIdempotencyFingerprintHeadersValidated(t *testing.T) {
	t.Parallel()
	store := mwtest.New(t).Store(t)
	for _, names := range [][]string{{""}, {"X-Currency", "Bad Name"}, {"X:Y"}, {"X-\u00e9"}} {
		if _, err := (echolock.IdempotencyConfig{Store: store, FingerprintHeaders: names}).ToMiddleware(); err == nil || !strings.Contains(err.Error(), "FingerprintHeaders") {
			t.Errorf("FingerprintHeaders %q: %v, want an error", names, err)
		}
	}
	if _, err := (echolock.IdempotencyConfig{Store: store, FingerprintHeaders: []string{"Host", "x-tenant-id"}}).ToMiddleware(); err != nil {
		t.Errorf("valid names: %v", err)
	}
}
