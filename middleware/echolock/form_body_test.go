package echolock_test

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotencyFormReadBefore: a middleware in front of Idempotency that
// reads a form field (CSRF with a form token) consumes the body before the
// fingerprint is taken. The same key with another form must still answer
// 422, not replay the first form's response.
func TestIdempotencyFormReadBefore(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	var runs atomic.Int64
	e := echo.New()
	e.Use(middleware.CSRFWithConfig(middleware.CSRFConfig{TokenLookup: "form:_csrf"}))
	e.POST("/charges", func(c echo.Context) error {
		runs.Add(1)
		return c.String(http.StatusCreated, "charged "+c.FormValue("amount"))
	}, echolock.IdempotencyWithConfig(echolock.IdempotencyConfig{Store: env.Store(t)}))
	srv := serve(t, e)
	form := func(amount, key string) result {
		return do(t, srv, "POST", "/charges", fmt.Sprintf("_csrf=tok&amount=%s", amount),
			"Content-Type", "application/x-www-form-urlencoded", "Cookie", "_csrf=tok", "Idempotency-Key", key)
	}
	if r := form("1", "K1"); r.code != http.StatusCreated || r.body != "charged 1" {
		t.Fatalf("first: %d %q", r.code, r.body)
	}
	if r := form("1000", "K1"); r.code != http.StatusUnprocessableEntity {
		t.Errorf("same key, other form: %d %q replayed=%q; want 422", r.code, r.body, r.header.Get(echolock.HeaderIdempotentReplayed))
	}
	if r := form("1", "K1"); r.body != "charged 1" || r.header.Get(echolock.HeaderIdempotentReplayed) != "true" {
		t.Errorf("retry of the first form: %d %q, want its response replayed", r.code, r.body)
	}
	if r := form("1000", "K2"); r.code != http.StatusCreated || r.body != "charged 1000" {
		t.Errorf("other form, new key: %d %q", r.code, r.body)
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("handler ran %d times, want 2", n)
	}
}

// TestIdempotencyMultipartReadBefore: as TestIdempotencyFormReadBefore, with
// a multipart form whose requests differ only in an uploaded file.
func TestIdempotencyMultipartReadBefore(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	var runs atomic.Int64
	e := echo.New()
	e.Use(middleware.CSRFWithConfig(middleware.CSRFConfig{TokenLookup: "form:_csrf"}))
	e.POST("/uploads", func(c echo.Context) error {
		runs.Add(1)
		fh, err := c.FormFile("doc")
		if err != nil {
			return err
		}
		return c.String(http.StatusCreated, fmt.Sprintf("stored %d bytes", fh.Size))
	}, echolock.IdempotencyWithConfig(echolock.IdempotencyConfig{Store: env.Store(t)}))
	srv := serve(t, e)
	upload := func(content, key string) result {
		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		_ = w.WriteField("_csrf", "tok")
		fw, _ := w.CreateFormFile("doc", "a.txt")
		_, _ = fw.Write([]byte(content))
		_ = w.Close()
		return do(t, srv, "POST", "/uploads", b.String(),
			"Content-Type", w.FormDataContentType(), "Cookie", "_csrf=tok", "Idempotency-Key", key)
	}
	if r := upload("short", "K1"); r.code != http.StatusCreated || r.body != "stored 5 bytes" {
		t.Fatalf("first: %d %q", r.code, r.body)
	}
	if r := upload("a longer file", "K1"); r.code != http.StatusUnprocessableEntity {
		t.Errorf("same key, other file: %d %q; want 422", r.code, r.body)
	}
	if r := upload("short", "K1"); r.body != "stored 5 bytes" || r.header.Get(echolock.HeaderIdempotentReplayed) != "true" {
		t.Errorf("retry of the first upload: %d %q, want its response replayed", r.code, r.body)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("handler ran %d times, want 1", n)
	}
}
