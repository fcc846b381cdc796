package echolock_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
)

// TestIdempotencyStoredHeadersSpelledTwice: a header listed in
// StoredHeaders under two spellings is stored and replayed once, with the
// values the first answer carried.
func TestIdempotencyStoredHeadersSpelledTwice(t *testing.T) {
	t.Parallel()
	srv, _ := idemServer(t, echolock.IdempotencyConfig{StoredHeaders: []string{"ETag", "Etag", "etag", "Link"}},
		func(c echo.Context) error {
			c.Response().Header().Add("Link", "</a>; rel=a")
			c.Response().Header().Add("Link", "</b>; rel=b")
			c.Response().Header().Set("ETag", `"v1"`)
			return c.String(http.StatusCreated, "created")
		})
	first := do(t, srv, "POST", "/charges", `{}`, "Idempotency-Key", "k")
	again := do(t, srv, "POST", "/charges", `{}`, "Idempotency-Key", "k")
	if again.header.Get(echolock.HeaderIdempotentReplayed) != "true" {
		t.Fatalf("second request not replayed: %d %v", again.code, again.header)
	}
	for _, name := range []string{"ETag", "Link"} {
		if got, want := again.header.Values(name), first.header.Values(name); !slices.Equal(got, want) {
			t.Errorf("replayed %s %q, first answer %q", name, got, want)
		}
	}
}
