package idempotency

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// lockedBuffer is a bytes.Buffer a logger may write from any goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The store logs what it recovers on its own goroutines (here a claim's
// renewal whose client wrapper panics) to the logger it was given, as the
// lock middleware logs to theirs, not to slog's default.
func TestStoreLogger(t *testing.T) {
	node := redistest.Server(t)
	rc := &panickyClient{Client: node.Client(t)}
	var logs lockedBuffer
	s, err := NewStore(rc, WithPrefix(redistest.Prefix(t)), WithClaimTTL(600*time.Millisecond), WithTimeout(time.Second),
		WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	c := reserve(t, s, "logger")
	ctx, cancel := c.Context(context.Background())
	defer cancel()
	rc.on.Store(true)
	ended(t, ctx, 5*time.Second)
	rc.on.Store(false)
	if !strings.Contains(logs.String(), `msg="panic recovered" in="renewing an idempotency claim"`) {
		t.Fatalf("the renewal's panic was not logged to the store's logger; its log:\n%s", logs.String())
	}
}
