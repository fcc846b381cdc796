package scriptlock

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// panickyHandler is a slog handler whose Handle panics, as a user's may.
type panickyHandler struct{ calls *atomic.Int64 }

func (h panickyHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h panickyHandler) Handle(context.Context, slog.Record) error {
	h.calls.Add(1)
	panic("log handler panicked")
}
func (h panickyHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h panickyHandler) WithGroup(string) slog.Handler      { return h }

// A log handler that panics does not crash the process from the Client's
// own goroutines, which log what no caller hears of (here a hold the
// watchdog found lost, logged by the Client's reporter): the record is
// dropped, and the Client goes on. The hold ends with ErrLockLost, and the
// lock is taken again.
func TestLogHandlerPanicDropped(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	var calls atomic.Int64
	c := newTestClient(t, node.Client(t), WithWatchdog(time.Second, 300*time.Millisecond),
		WithLogger(slog.New(panickyHandler{&calls})))
	ctx := testCtx(t, 20*time.Second)
	m := mustMutex(t, c, "log-handler-panic")
	h, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rc := node.Client(t)
	if err := rc.Do(ctx, rc.B().Del().Key(m.Key()).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the hold whose key was deleted did not end")
	}
	if err := context.Cause(h); !errors.Is(err, ErrLockLost) {
		t.Fatalf("the hold ended with %v, want ErrLockLost", err)
	}
	if !eventually(5*time.Second, func() bool { return calls.Load() > 0 }) {
		t.Fatal("the loss was not logged")
	}
	h, err = m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(h); err != nil {
		t.Fatal(err)
	}
}
