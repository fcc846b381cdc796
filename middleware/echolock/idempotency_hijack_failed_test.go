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
)

// TestIdempotencyHijackRefused: a handler that tries to take the connection
// over and is refused (HTTP/2 has no Hijack) answers normally; that answer is
// stored and replayed like any other. The attempt alone used to mark the
// answer unreplayable, so every retry got 409 for the whole TTL.
func TestIdempotencyHijackRefused(t *testing.T) {
	t.Parallel()
	store := plainStore(t)
	var runs atomic.Int64
	e := echo.New()
	e.POST("/charges", func(c echo.Context) error {
		runs.Add(1)
		if _, _, err := http.NewResponseController(c.Response()).Hijack(); err == nil {
			t.Error("hijack over HTTP/2 succeeded")
		}
		return c.String(http.StatusCreated, "charged")
	}, echolock.Idempotency(store))
	srv := httptest.NewUnstartedServer(e)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	post := func() (int, string, string) {
		req, _ := http.NewRequest("POST", srv.URL+"/charges", strings.NewReader("b"))
		req.Header.Set("Idempotency-Key", "h2")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.ProtoMajor != 2 {
			t.Fatalf("%s, want HTTP/2", resp.Proto)
		}
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header.Get(echolock.HeaderIdempotentReplayed)
	}
	if code, body, _ := post(); code != http.StatusCreated || body != "charged" {
		t.Fatalf("first: %d %q", code, body)
	}
	if code, body, replayed := post(); code != http.StatusCreated || body != "charged" || replayed != "true" || runs.Load() != 1 {
		t.Fatalf("retry: %d %q replayed=%q, handler runs %d; want the 201 replayed, one run", code, strings.TrimSpace(body), replayed, runs.Load())
	}
}
