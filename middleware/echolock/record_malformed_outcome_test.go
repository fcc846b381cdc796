package echolock_test

import (
	"net/http"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/echolock"
)

// TestIdempotencyRecordMalformedOutcome: a stored response this version
// cannot decode (no version byte, a truncated record) answers the store's
// 503 and is reported as the store's other 503 answers are, never as a
// replay, which the client did not get; the request does not run again.
func TestIdempotencyRecordMalformedOutcome(t *testing.T) {
	t.Parallel()
	var out outcomes
	var runs atomic.Int64
	srv, node := idemServer(t, echolock.IdempotencyConfig{OnOutcome: out.report}, func(c echo.Context) error {
		runs.Add(1)
		return c.String(http.StatusCreated, "made")
	})
	if r := do(t, srv, "POST", "/charges", "{}", "Idempotency-Key", "k"); r.code != http.StatusCreated {
		t.Fatalf("first: %d", r.code)
	}
	keys, err := node.Do(t, "KEYS", "*").AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	var key, rec string
	for _, k := range keys {
		if typ, _ := node.Do(t, "TYPE", k).ToString(); typ == "hash" {
			if v, err := node.Do(t, "HGET", k, "resp").ToString(); err == nil {
				key, rec = k, v
			}
		}
	}
	if key == "" {
		t.Fatal("no stored record")
	}
	for _, bad := range []string{"\x00", rec[:len(rec)-1]} {
		node.Do(t, "HSET", key, "resp", bad)
		r := do(t, srv, "POST", "/charges", "{}", "Idempotency-Key", "k")
		if r.code != http.StatusServiceUnavailable || r.header.Get(echolock.HeaderIdempotentReplayed) != "" {
			t.Errorf("malformed record %q: %d %v, want 503 without a replay", bad, r.code, r.header)
		}
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("handler ran %d times", n)
	}
	want := []scriptlock.RequestOutcome{scriptlock.RequestExecuted, scriptlock.RequestRedisDown, scriptlock.RequestRedisDown}
	if got := out.take(); !slices.Equal(got, want) {
		t.Errorf("outcomes %v, want %v", got, want)
	}
}
