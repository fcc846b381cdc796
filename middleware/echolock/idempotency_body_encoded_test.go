package echolock_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotencyEncodedEmptyBody: a request whose body is sent compressed
// (Content-Encoding: gzip, decoded by Echo's Decompress in front) and holds
// nothing once decoded declares the length of the compressed bytes: it is
// run and replayed like any request, not refused with 500 as a body a
// middleware in front had read.
func TestIdempotencyEncodedEmptyBody(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	var runs atomic.Int64
	e := echo.New()
	e.POST("/orders/7/pay", func(c echo.Context) error {
		runs.Add(1)
		b, err := io.ReadAll(c.Request().Body)
		if err != nil {
			return err
		}
		return c.String(http.StatusCreated, "paid "+string(b))
	}, middleware.Decompress(), echolock.Idempotency(store))
	srv := serve(t, e)
	gz := func(s string) string {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		_, _ = w.Write([]byte(s))
		_ = w.Close()
		return b.String()
	}
	for i := range 2 {
		r := do(t, srv, "POST", "/orders/7/pay", gz(""), "Idempotency-Key", "k", "Content-Encoding", "gzip")
		if r.code != http.StatusCreated || r.body != "paid " {
			t.Errorf("empty body sent compressed, call %d: %d %q, want 201", i+1, r.code, r.body)
		}
	}
	if r := do(t, srv, "POST", "/orders/7/pay", gz("x"), "Idempotency-Key", "k2", "Content-Encoding", "gzip"); r.code != http.StatusCreated || r.body != "paid x" {
		t.Errorf("body sent compressed: %d %q, want 201", r.code, r.body)
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("handler ran %d times, want 2 (the retry replayed)", n)
	}
}
