package echolock_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
)

// TestIdempotencyRecordLaterVersion: a stored response that a later version
// wrote in a form this one cannot read answers 503 with Retry-After (an
// instance that reads it replays it to the retry), and the request never runs
// twice; optional sections a later version appended are ignored.
func TestIdempotencyRecordLaterVersion(t *testing.T) {
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
	var key, rec string
	for _, k := range keys {
		if typ, _ := node.Do(t, "TYPE", k).ToString(); typ == "hash" {
			if v, err := node.Do(t, "HGET", k, "resp").ToString(); err == nil {
				key, rec = k, v
			}
		}
	}
	if key == "" || len(rec) < 2 || rec[0] != 1 || rec[1] != 0 {
		t.Fatalf("stored record %q %q", key, rec)
	}
	node.Do(t, "HSET", key, "resp", "\x02"+rec[1:])
	r := do(t, srv, "POST", "/charges", "{}", "Idempotency-Key", "k")
	if r.code != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
		t.Errorf("record of a later version: %d, Retry-After %q; want 503 with Retry-After", r.code, r.header.Get("Retry-After"))
	}
	node.Do(t, "HSET", key, "resp", "\x01\x10"+rec[2:]+"later")
	if r := do(t, srv, "POST", "/charges", "{}", "Idempotency-Key", "k"); r.code != http.StatusCreated || r.body != "made" {
		t.Errorf("record with a later optional section: %d %q, want the replay", r.code, r.body)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("handler ran %d times", n)
	}
}
