package echolock_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// chunked sends body without a declared length (Transfer-Encoding: chunked
// on HTTP/1.1), as a client streaming its payload does.
func chunked(t *testing.T, srv interface{ Client() *http.Client }, url, body, key string) result {
	t.Helper()
	req, err := http.NewRequest("POST", url, io.MultiReader(strings.NewReader(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = -1
	req.Header.Set("Idempotency-Key", key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return result{resp.StatusCode, string(b), resp.Header}
}

// TestIdempotencyChunkedBodyReadInFront: as TestIdempotencyBodyReadInFront,
// with a body sent chunked (no Content-Length), also behind Echo's BodyLimit:
// a body that a middleware in front read to its end is refused (500), never
// fingerprinted as empty. An empty chunked body nobody read runs.
func TestIdempotencyChunkedBodyReadInFront(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	var runs atomic.Int64
	e := echo.New()
	bindInFront := func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			b, err := io.ReadAll(c.Request().Body)
			if err != nil {
				return err
			}
			c.Set("payload", string(b))
			return next(c)
		}
	}
	h := func(c echo.Context) error {
		runs.Add(1)
		p, _ := c.Get("payload").(string)
		return c.String(http.StatusCreated, "charged "+p)
	}
	e.POST("/charges", h, bindInFront, echolock.Idempotency(store))
	e.POST("/limited", h, bodyLimit1M(), bindInFront, echolock.Idempotency(store))
	e.POST("/plain", h, echolock.Idempotency(store))
	srv := serve(t, e)
	for _, path := range []string{"/charges", "/limited"} {
		first := chunked(t, srv, srv.URL+path, `{"amount":100}`, "k"+path)
		other := chunked(t, srv, srv.URL+path, `{"amount":900}`, "k"+path)
		if other.header.Get(echolock.HeaderIdempotentReplayed) != "" {
			t.Errorf("%s: another payload under the same key got the first one's response replayed: %d %q", path, other.code, other.body)
		}
		for _, r := range []result{first, other} {
			if r.code != http.StatusInternalServerError {
				t.Errorf("%s: chunked body read in front: %d %q, want 500", path, r.code, r.body)
			}
		}
	}
	if n := runs.Load(); n != 0 {
		t.Errorf("handler ran %d times without a fingerprint of its body", n)
	}
	// HTTP/2: no Content-Length either.
	h2 := httptest.NewUnstartedServer(e)
	h2.EnableHTTP2 = true
	h2.StartTLS()
	t.Cleanup(h2.Close)
	if r := chunked(t, h2, h2.URL+"/charges", `{"amount":100}`, "k-h2"); r.code != http.StatusInternalServerError {
		t.Errorf("HTTP/2 body of unknown length read in front: %d %q, want 500", r.code, r.body)
	}
	if r := chunked(t, h2, h2.URL+"/plain", `{"amount":100}`, "k-h2b"); r.code != http.StatusCreated {
		t.Errorf("HTTP/2 body of unknown length: %d %q, want 201", r.code, r.body)
	}
	if r := chunked(t, srv, srv.URL+"/plain", "", "k3"); r.code != http.StatusCreated {
		t.Errorf("empty chunked body: %d %q, want 201", r.code, r.body)
	}
	if r := chunked(t, srv, srv.URL+"/plain", `{"amount":1}`, "k4"); r.code != http.StatusCreated {
		t.Errorf("chunked body: %d %q, want 201", r.code, r.body)
	}
}
