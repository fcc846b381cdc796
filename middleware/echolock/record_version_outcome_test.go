package echolock_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/middleware/echolock"
)

// TestIdempotencyRecordLaterVersionKept: a record of a later version is
// answered 503, reported as the store's other 503 answers are (not as a
// replay, which the client did not get), and left as it is, so that the
// retry gets the stored response once an instance that reads it answers.
func TestIdempotencyRecordLaterVersionKept(t *testing.T) {
	t.Parallel()
	var out outcomes
	srv, node := idemServer(t, echolock.IdempotencyConfig{OnOutcome: out.report}, func(c echo.Context) error {
		c.Response().Header().Set("Location", "/charges/1")
		return c.String(http.StatusCreated, "made")
	})
	first := do(t, srv, "POST", "/charges", "{}", "Idempotency-Key", "k")
	if first.code != http.StatusCreated {
		t.Fatalf("first: %d", first.code)
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
	later := "\x01\x08" + rec[2:]
	node.Do(t, "HSET", key, "resp", later)
	ttl, _ := node.Do(t, "PTTL", key).AsInt64()
	for range 2 {
		if r := do(t, srv, "POST", "/charges", "{}", "Idempotency-Key", "k"); r.code != http.StatusServiceUnavailable {
			t.Errorf("record of a later version: %d, want 503", r.code)
		}
	}
	if v, _ := node.Do(t, "HGET", key, "resp").ToString(); v != later {
		t.Errorf("record of a later version changed to %q", v)
	}
	if left, _ := node.Do(t, "PTTL", key).AsInt64(); left <= 0 || left > ttl {
		t.Errorf("record of a later version: TTL %d ms, was %d ms", left, ttl)
	}
	node.Do(t, "HSET", key, "resp", rec)
	r := do(t, srv, "POST", "/charges", "{}", "Idempotency-Key", "k")
	if r.code != first.code || r.body != first.body || r.header.Get("Location") != "/charges/1" || r.header.Get("Content-Type") != first.header.Get("Content-Type") {
		t.Errorf("replay: %d %q %v; first %d %q %v", r.code, r.body, r.header, first.code, first.body, first.header)
	}
	want := []scriptlock.RequestOutcome{scriptlock.RequestExecuted, scriptlock.RequestRedisDown, scriptlock.RequestRedisDown, scriptlock.RequestReplayed}
	if got := out.take(); !slices.Equal(got, want) {
		t.Errorf("outcomes %v, want %v", got, want)
	}
}
