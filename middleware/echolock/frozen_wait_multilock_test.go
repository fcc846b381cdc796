package echolock_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/echolock"
)

// TestFrozenRedisWaitMultiLockUnavailable: a request whose lock is a
// MultiLock, waiting while Redis stops answering, is answered 503 with
// Retry-After as it is for a Mutex, not 409, which would tell the client
// that another request holds locks no one holds.
func TestFrozenRedisWaitMultiLockUnavailable(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	lc, err := scriptlock.New(px.Client(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lc.Close() })
	locks := func(key string) (scriptlock.Locker, error) {
		order, err := lc.Mutex(key + ":order")
		if err != nil {
			return nil, err
		}
		wallet, err := lc.Mutex(key + ":wallet")
		if err != nil {
			return nil, err
		}
		return scriptlock.NewMultiLock([]scriptlock.Locker{order, wallet})
	}
	var runs atomic.Int64
	e := echo.New()
	e.POST("/charges/:id", func(c echo.Context) error {
		runs.Add(1)
		return c.NoContent(http.StatusNoContent)
	}, echolock.LockWithConfig(echolock.LockConfig{Lock: locks, KeyPrefix: redistest.Prefix(t), Wait: 500 * time.Millisecond}))
	// The connection open and the scripts loaded first; made again, up to
	// five times, when a loaded machine's first locks miss the 500 ms wait.
	// Each try on an order of its own: a try cut off at the wait's end gives
	// back the member it took, or undoes a grant that came late, after it
	// answered 503, and on a loaded machine the next try on the same order
	// could wait out its 500 ms behind that give-back and answer 409.
	rec := httptest.NewRecorder()
	for try := 0; try < 5; try++ {
		rec = httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest("POST", fmt.Sprintf("/charges/warm%d", try), nil))
		if rec.Code != http.StatusServiceUnavailable {
			break
		}
	}
	if rec.Code != http.StatusNoContent {
		t.Fatalf("first request: %d, want 204", rec.Code)
	}
	px.Freeze()
	t.Cleanup(px.Thaw)
	rec = httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest("POST", "/charges/2", nil))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "1" || runs.Load() != 1 {
		t.Errorf("waiting request, Redis frozen: %d Retry-After %q, handler runs %d; want 503 Retry-After 1, no run",
			rec.Code, rec.Header().Get("Retry-After"), runs.Load())
	}
}
