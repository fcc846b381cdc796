package echolock_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// TestIdempotencyFingerprintContentType: the same key and body bytes sent
// with another media type are another request (422), while spellings of one
// media type (case, blanks, a charset's case) replay.
func TestIdempotencyFingerprintContentType(t *testing.T) {
	t.Parallel()
	var runs atomic.Int64
	srv, _ := idemServer(t, echolock.IdempotencyConfig{}, func(c echo.Context) error {
		runs.Add(1)
		return c.String(http.StatusCreated, "as "+c.Request().Header.Get(echo.HeaderContentType))
	})
	body := `a=1`
	first := do(t, srv, "POST", "/charges", body, "Idempotency-Key", "k", "Content-Type", "application/json; charset=utf-8")
	if first.code != http.StatusCreated {
		t.Fatalf("first: %d %s", first.code, first.body)
	}
	for _, ct := range []string{"application/x-www-form-urlencoded", "text/plain", "application/json", "application/json; charset=latin1", ""} {
		hdr := []string{"Idempotency-Key", "k"}
		if ct != "" {
			hdr = append(hdr, "Content-Type", ct)
		}
		if r := do(t, srv, "POST", "/charges", body, hdr...); r.code != http.StatusUnprocessableEntity {
			t.Errorf("Content-Type %q: %d %q, want 422", ct, r.code, r.body)
		}
	}
	for _, ct := range []string{"application/json; charset=utf-8", "Application/JSON;Charset=UTF-8", "application/json ;  charset=\"utf-8\""} {
		r := do(t, srv, "POST", "/charges", body, "Idempotency-Key", "k", "Content-Type", ct)
		if r.code != http.StatusCreated || r.body != first.body || r.header.Get(echolock.HeaderIdempotentReplayed) != "true" {
			t.Errorf("Content-Type %q: %d %q, want the replay of %q", ct, r.code, r.body, first.body)
		}
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("handler ran %d times", n)
	}
}

// TestIdempotencyFingerprintEarlierVersion: a record stored with the
// fingerprint an earlier version computed (without the media type) is
// replayed to the same request, and answers 422 to another one: it is read
// as what it is, neither a mismatch nor a match of anything.
func TestIdempotencyFingerprintEarlierVersion(t *testing.T) {
	t.Parallel()
	store := plainStore(t, idempotency.WithTimeout(time.Second))
	var runs atomic.Int64
	e := echo.New()
	e.POST("/charges", func(c echo.Context) error {
		runs.Add(1)
		return c.String(http.StatusCreated, "ran")
	}, echolock.Idempotency(store))
	srv := serve(t, e)

	// What the earlier version stored: method, route, URI and body.
	body := `{"amount": 1}`
	earlier := idempotency.Fingerprint([]byte("POST"), []byte("/charges"), []byte("/charges"), []byte(body))
	ctx := context.Background()
	res, err := store.Reserve(ctx, idempotency.AnonymousScope, "old", earlier)
	if err != nil || res.State != idempotency.Claimed {
		t.Fatalf("reserve: %v %v", res.State, err)
	}
	stored := idempotency.StoredResponse{Status: http.StatusCreated, Body: []byte("stored earlier")}
	if ok, err := res.Claim.Complete(ctx, stored.Encode()); !ok || err != nil {
		t.Fatalf("complete: %v %v", ok, err)
	}

	r := do(t, srv, "POST", "/charges", body, "Idempotency-Key", "old", "Content-Type", "application/json")
	if r.code != http.StatusCreated || r.body != "stored earlier" || r.header.Get(echolock.HeaderIdempotentReplayed) != "true" {
		t.Errorf("same request: %d %q, want the replay of the earlier record", r.code, r.body)
	}
	if r := do(t, srv, "POST", "/charges", `{"amount": 2}`, "Idempotency-Key", "old", "Content-Type", "application/json"); r.code != http.StatusUnprocessableEntity {
		t.Errorf("other body: %d %q, want 422", r.code, r.body)
	}
	if n := runs.Load(); n != 0 {
		t.Errorf("handler ran %d times", n)
	}
}
