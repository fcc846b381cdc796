package echolock_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
)

// TestIdempotencyEarlyHintsThroughEcho: a handler that sends 103 Early Hints
// through echo.Response (which takes any status for the answer) before its
// answer has the answer the client got stored and replayed, not the 103. The
// record used to hold status 103, which its own replay refuses as malformed:
// every retry was answered 503 for the record's whole TTL, neither replayed
// nor run again. A handler that sent only the 103 answers the empty 200
// net/http sends for it, stored like any other answer.
func TestIdempotencyEarlyHintsThroughEcho(t *testing.T) {
	t.Parallel()
	var runs atomic.Int64
	srv, _ := idemServer(t, echolock.IdempotencyConfig{}, func(c echo.Context) error {
		runs.Add(1)
		c.Response().Header().Set("Link", "</style.css>; rel=preload; as=style")
		c.Response().WriteHeader(http.StatusEarlyHints)
		if c.Param("id") == "hints-only" {
			return nil
		}
		return c.String(http.StatusOK, "charged")
	})
	for _, tc := range []struct{ path, body string }{{"/charges", "charged"}, {"/charges/hints-only", ""}} {
		first := do(t, srv, "POST", tc.path, "b", "Idempotency-Key", "k"+tc.path)
		if first.code != http.StatusOK || first.body != tc.body {
			t.Fatalf("%s: first %d %q, want 200 %q", tc.path, first.code, first.body, tc.body)
		}
		retry := do(t, srv, "POST", tc.path, "b", "Idempotency-Key", "k"+tc.path)
		if retry.code != first.code || retry.body != first.body || retry.header.Get(echolock.HeaderIdempotentReplayed) != "true" {
			t.Errorf("%s: retry %d %q replayed %q, want the first answer %d %q replayed",
				tc.path, retry.code, retry.body, retry.header.Get(echolock.HeaderIdempotentReplayed), first.code, first.body)
		}
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("handler ran %d times, want once per key", n)
	}
}
