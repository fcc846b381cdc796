package echolock_test

import (
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/internal/mwtest"
)

// TestIdempotencyReplayAttachment: an answer sent as a download (Echo's
// c.Attachment, c.Inline: Content-Disposition with the file's name) is
// replayed as one, with its Content-Disposition, as its Content-Type is:
// without it a browser shows the receipt inline, or saves it under another
// name.
func TestIdempotencyReplayAttachment(t *testing.T) {
	t.Parallel()
	env := mwtest.New(t)
	store := env.Store(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "r.txt"), []byte("paid 100\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int64
	e := echo.New()
	e.Filesystem = os.DirFS(dir) // Echo v5 serves files from e.Filesystem only
	file := "r.txt"
	e.POST("/receipts", func(c echo.Context) error {
		runs.Add(1)
		return c.Attachment(file, "receipt-42.txt")
	}, echolock.Idempotency(store))
	srv := serve(t, e)
	first := do(t, srv, "POST", "/receipts", "", "Idempotency-Key", "k")
	again := do(t, srv, "POST", "/receipts", "", "Idempotency-Key", "k")
	if first.code != http.StatusOK || first.header.Get(echo.HeaderContentDisposition) == "" {
		t.Fatalf("first: %d %v", first.code, first.header)
	}
	if again.header.Get(echolock.HeaderIdempotentReplayed) != "true" || again.body != first.body || runs.Load() != 1 {
		t.Fatalf("not replayed: %d %q %v (runs %d)", again.code, again.body, again.header, runs.Load())
	}
	if got, want := again.header.Get(echo.HeaderContentDisposition), first.header.Get(echo.HeaderContentDisposition); got != want {
		t.Errorf("replayed Content-Disposition %q, want %q", got, want)
	}
}
