package scriptlock

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A wait's subscription, whose Receive runs on a goroutine of the Client's
// own, meets a client wrapper that panics: the panic is logged and the
// subscription ends as one that failed (the wait ends with its error, or
// calls again), instead
// of crashing the process from that goroutine. The lock is taken once it
// is free.
func TestReceivePanicLogged(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	h := newTestClient(t, node.Client(t))
	rc := newPanickyClient(node.Client(t), func(c wrapperCall) bool { return c.method == "Receive" })
	rc.left.Store(-1)
	var logs syncBuffer
	c := newTestClient(t, rc, WithKeyPrefix(h.cfg.prefix), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	ctx := testCtx(t, 20*time.Second)
	hm, m := mustMutex(t, h, "receive-panic"), mustMutex(t, c, "receive-panic")
	hl, err := hm.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.TryLock(ctx, 500*time.Millisecond); !errors.Is(err, ErrNotAcquired) && !errors.Is(err, errCallPanicked) {
		t.Fatalf("TryLock of a held lock: %v, want ErrNotAcquired or the subscription's failure", err)
	}
	if !eventually(5*time.Second, func() bool { return strings.Contains(logs.String(), "panic recovered") }) {
		t.Fatalf("the subscription's panic was not logged; log:\n%s", logs.String())
	}
	rc.left.Store(0)
	if err := hm.Unlock(hl); err != nil {
		t.Fatal(err)
	}
	l, err := m.TryLock(ctx, 5*time.Second)
	if err != nil {
		t.Fatalf("TryLock once the lock is free: %v", err)
	}
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
}
