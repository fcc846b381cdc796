package echolock_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotencyGzipReplayDecodedBounded: an answer stored gzip-compressed
// is stored by its compressed size, which says little of its decoded size
// (a run of one byte compresses a thousandfold). A retry whose
// Accept-Encoding does not take gzip gets it decoded only up to
// MaxReplayDecodedBytes; past that it is refused with 406 and a message
// saying to accept gzip, not decoded without bound. One that takes gzip
// still gets it as stored.
func TestIdempotencyGzipReplayDecodedBounded(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	const decoded = 4 << 20 // compresses to about 4 KiB, far under MaxResponseBytes
	e := echo.New()
	e.POST("/report", func(c echo.Context) error {
		return c.String(http.StatusCreated, strings.Repeat("a", decoded))
	}, echolock.IdempotencyWithConfig(echolock.IdempotencyConfig{Store: store, MaxReplayDecodedBytes: 1 << 20}), middleware.Gzip())
	srv := serve(t, e)
	first := do(t, srv, "POST", "/report", "", "Idempotency-Key", "K", "Accept-Encoding", "gzip")
	if first.code != http.StatusCreated || first.header.Get(echo.HeaderContentEncoding) != "gzip" || len(first.body) >= 1<<20 {
		t.Fatalf("first: %d Content-Encoding %q, %d bytes; want a small gzip 201", first.code, first.header.Get(echo.HeaderContentEncoding), len(first.body))
	}
	r := do(t, srv, "POST", "/report", "", "Idempotency-Key", "K", "Accept-Encoding", "identity")
	if r.code != http.StatusNotAcceptable || len(r.body) >= 1<<20 || !strings.Contains(r.body, "gzip") {
		t.Errorf("replay decoding to %d bytes, MaxReplayDecodedBytes 1 MiB, Accept-Encoding identity: %d, %d bytes (%.80q); want 406 saying to accept gzip",
			decoded, r.code, len(r.body), r.body)
	}
	g := doRaw(t, srv, "POST", "/report", "Idempotency-Key", "K", "Accept-Encoding", "gzip")
	if g.code != http.StatusCreated || g.header.Get(echo.HeaderContentEncoding) != "gzip" || g.body != first.body {
		t.Errorf("replay, Accept-Encoding gzip: %d Content-Encoding %q; want the stored gzip answer", g.code, g.header.Get(echo.HeaderContentEncoding))
	}
}

// TestIdempotencyGzipReplayRefusalVaries: the 406 a retry that does not take
// gzip gets for a stored answer decoding past MaxReplayDecodedBytes is
// chosen by its Accept-Encoding (one that takes gzip gets the stored 201),
// so it says Vary: Accept-Encoding, as either replay does: a cache must not
// give the refusal to a client that takes gzip. A Vary a middleware further
// out set is kept.
func TestIdempotencyGzipReplayRefusalVaries(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	e := echo.New()
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			c.Response().Header().Add(echo.HeaderVary, "Origin")
			return next(c)
		}
	})
	e.POST("/report", func(c echo.Context) error {
		return c.String(http.StatusCreated, strings.Repeat("a", 1<<12+1))
	}, echolock.IdempotencyWithConfig(echolock.IdempotencyConfig{Store: store, MaxReplayDecodedBytes: 1 << 12}), middleware.Gzip())
	srv := serve(t, e)
	if first := do(t, srv, "POST", "/report", "", "Idempotency-Key", "K", "Accept-Encoding", "gzip"); first.code != http.StatusCreated {
		t.Fatalf("first: %d; want 201", first.code)
	}
	r := do(t, srv, "POST", "/report", "", "Idempotency-Key", "K", "Accept-Encoding", "identity")
	if r.code != http.StatusNotAcceptable {
		t.Fatalf("replay, Accept-Encoding identity: %d; want 406", r.code)
	}
	vary := strings.Join(r.header.Values(echo.HeaderVary), ", ")
	if !strings.Contains(vary, "Accept-Encoding") || !strings.Contains(vary, "Origin") {
		t.Errorf("406 for a retry that does not take gzip: Vary %q; want Accept-Encoding named (and Origin kept)", vary)
	}
}
