package echolock_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/scriptlock/scriptlock/internal/redistest"
	"github.com/scriptlock/scriptlock/middleware/echolock"
	"github.com/scriptlock/scriptlock/middleware/idempotency"
)

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestIdempotencyRetryDroppedLogged: a response whose store failed and that
// the store does not retry (its background retries are all taken) is logged
// as an error (it is lost: a retry after the claim TTL runs again), not as a
// warning that it will be stored later.
func TestIdempotencyRetryDroppedLogged(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	store, err := idempotency.NewStore(node.Client(t), idempotency.WithPrefix(redistest.Prefix(t)),
		idempotency.WithTimeout(5*time.Second), idempotency.WithMaxBackgroundRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	warmStore(t, store)
	var logs syncBuffer
	e := echo.New()
	e.Use(recoverer)
	e.POST("/charges", func(c echo.Context) error {
		node.Kill() // after the claim, before the response is stored
		return c.String(http.StatusCreated, "charged")
	}, echolock.IdempotencyWithConfig(echolock.IdempotencyConfig{Store: store, Logger: slog.New(slog.NewTextHandler(&logs, nil))}))
	srv := serve(t, e)
	if r := do(t, srv, "POST", "/charges", "", "Idempotency-Key", "K"); r.code != http.StatusCreated {
		t.Fatalf("first: %d %q, want the handler's 201", r.code, r.body)
	}
	out := logs.String()
	if !strings.Contains(out, "level=ERROR") || !strings.Contains(out, "not retried") || strings.Contains(out, "not stored yet") {
		t.Errorf("log %q, want an error that the response is not retried", out)
	}
}
