package echolock_test

import (
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// TestIdempotencyStoredHeadersInvalidName: a StoredHeaders name that is no
// HTTP header field name is refused when the middleware is built, with
// ErrConfig, as a FingerprintHeaders name is.
func TestIdempotencyStoredHeadersInvalidName(t *testing.T) {
	t.Parallel()
	store, err := idempotency.NewStore(redistest.Server(t).Client(t), idempotency.WithPrefix(redistest.Prefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	for _, name := range []string{"", "X Bad", "X-Evil\r\nSet-Cookie: a=b", "Étag", "X:Y"} {
		_, err := echolock.IdempotencyConfig{Store: store, StoredHeaders: []string{"ETag", name}}.ToMiddleware()
		if !errors.Is(err, echolock.ErrConfig) {
			t.Errorf("StoredHeaders name %q: ToMiddleware error %v, want ErrConfig", name, err)
		}
	}
	for _, name := range []string{"", "X Bad"} {
		_, err := echolock.IdempotencyConfig{Store: store, FingerprintHeaders: []string{name}}.ToMiddleware()
		if !errors.Is(err, echolock.ErrConfig) {
			t.Errorf("FingerprintHeaders name %q: ToMiddleware error %v, want ErrConfig", name, err)
		}
	}
}

// TestIdempotencyStoredHeaderMalformed: a stored record naming a header that
// is no header field name, or holding a value no header may carry (a line
// break, a NUL), is a malformed record: 503 without a replay, and nothing of
// it written into the response. The request does not run again.
func TestIdempotencyStoredHeaderMalformed(t *testing.T) {
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
	for _, h := range []idempotency.HeaderField{
		{Name: "X-Evil\r\nSet-Cookie: session=stolen", Value: "v"},
		{Name: "X Evil", Value: "v"},
		{Name: "", Value: "v"},
		{Name: "Location", Value: "/a\r\nSet-Cookie: session=stolen"},
		{Name: "Location", Value: "/a\x00"},
	} {
		sr := idempotency.StoredResponse{Status: http.StatusCreated, Header: []idempotency.HeaderField{h}, Body: []byte("made")}
		node.Do(t, "HSET", key, "resp", string(sr.Encode()))
		r := do(t, srv, "POST", "/charges", "{}", "Idempotency-Key", "k")
		if r.code != http.StatusServiceUnavailable || r.header.Get(echolock.HeaderIdempotentReplayed) != "" || r.header.Get("Set-Cookie") != "" {
			t.Errorf("record with header %q: %q: %d %v, want 503 without a replay", h.Name, h.Value, r.code, r.header)
		}
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("handler ran %d times", n)
	}
}
