package echolock_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// TestIdempotencyRecordStatusMalformed: a stored record whose status no
// HTTP answer has (0, a gRPC code, 1000 and over: a record written by the
// gRPC interceptor into a shared store, or damaged) is malformed like one
// with an invalid header: 503 without a replay, not a panic in net/http's
// WriteHeader. The request does not run again.
func TestIdempotencyRecordStatusMalformed(t *testing.T) {
	t.Parallel()
	var runs atomic.Int64
	srv, node := idemServer(t, echolock.IdempotencyConfig{}, func(c echo.Context) error {
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
	var key string
	for _, k := range keys {
		if typ, _ := node.Do(t, "TYPE", k).ToString(); typ == "hash" {
			if _, err := node.Do(t, "HGET", k, "resp").ToString(); err == nil {
				key = k
			}
		}
	}
	if key == "" {
		t.Fatal("no stored record")
	}
	for _, status := range []int{0, 5, 99, 1000, 1 << 31} {
		sr := idempotency.StoredResponse{Status: status, Body: []byte("made")}
		node.Do(t, "HSET", key, "resp", string(sr.Encode()))
		r := do(t, srv, "POST", "/charges", "{}", "Idempotency-Key", "k")
		if r.code != http.StatusServiceUnavailable || r.header.Get(echolock.HeaderIdempotentReplayed) != "" {
			t.Errorf("record with status %d: %d %q %v, want 503 without a replay", status, r.code, r.body, r.header)
		}
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("handler ran %d times", n)
	}
}
