package echolock_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
)

// TestIdempotencyStoredHeaderNewline: a handler that puts a line break in a
// stored header's value (a Location built from client input) is answered
// as net/http sends it, the break turned into a space. That is what is
// stored and replayed: the record must not hold a value its own replay
// refuses as malformed, which would answer every retry 503 for the whole
// TTL, the request neither replayed nor run again.
func TestIdempotencyStoredHeaderNewline(t *testing.T) {
	t.Parallel()
	var runs atomic.Int64
	srv, _ := idemServer(t, echolock.IdempotencyConfig{}, func(c echo.Context) error {
		runs.Add(1)
		c.Response().Header().Set(echo.HeaderLocation, "/charges/a\r\nb ")
		c.Response().Header().Add("Cache-Control", "no-store\n")
		return c.String(http.StatusCreated, "made")
	})
	first := do(t, srv, "POST", "/charges", "{}", "Idempotency-Key", "k")
	if first.code != http.StatusCreated {
		t.Fatalf("first: %d %s", first.code, first.body)
	}
	again := do(t, srv, "POST", "/charges", "{}", "Idempotency-Key", "k")
	if again.code != http.StatusCreated || again.body != "made" || again.header.Get(echolock.HeaderIdempotentReplayed) != "true" {
		t.Fatalf("retry: %d %q (replayed %q); want the first answer replayed", again.code, again.body, again.header.Get(echolock.HeaderIdempotentReplayed))
	}
	for _, name := range []string{echo.HeaderLocation, "Cache-Control"} {
		if got, want := again.header.Values(name), first.header.Values(name); len(got) != len(want) || len(got) != 1 || got[0] != want[0] {
			t.Errorf("replayed %s %q, first answer had %q", name, got, want)
		}
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("handler ran %d times", n)
	}
}
