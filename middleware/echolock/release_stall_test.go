package echolock_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/echolock"
)

// TestReleaseStallBounded: the answer waits for the release, and on a Redis
// that stopped answering for no longer than the Client's release timeout;
// the failed release is logged.
func TestReleaseStallBounded(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	lc, err := scriptlock.New(px.Client(t), scriptlock.WithReleaseTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lc.Close() })
	var logs syncBuffer
	e := echo.New()
	// Timed from the freeze: the lock's acquisition before it (a first
	// call's dial and script load) is not the release's bound.
	var frozen time.Time
	e.POST("/:id", func(c echo.Context) error {
		px.Freeze()
		frozen = time.Now()
		return c.NoContent(http.StatusNoContent)
	}, echolock.LockWithConfig(echolock.LockConfig{Client: lc, KeyPrefix: redistest.Prefix(t), Logger: slog.New(slog.NewTextHandler(&logs, nil))}))
	t.Cleanup(px.Thaw)
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest("POST", "/7", nil))
	elapsed := time.Since(frozen)
	if rec.Code != http.StatusNoContent || frozen.IsZero() || elapsed > 1800*time.Millisecond {
		t.Errorf("release on a frozen Redis: %d %s after the freeze, want the handler's 204 within the 1 s release timeout", rec.Code, elapsed)
	}
	if !strings.Contains(logs.String(), "release failed") {
		t.Errorf("failed release not logged: %q", logs.String())
	}
}
