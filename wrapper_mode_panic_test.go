package scriptlock

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A client wrapper whose Mode panics after New does not crash the process
// from the watchdog's goroutine, which asks the mode at every round: a
// rueidis client's mode never changes, and the Client reads it once, in
// New. The hold is renewed past its lease and released.
func TestWatchdogModePanic(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	var logs syncBuffer
	rc := newPanickyClient(node.Client(t), func(c wrapperCall) bool { return c.method == "Mode" })
	// A 2 s lease renewed every 300 ms: a loaded machine's renewal has
	// 1.7 s to be confirmed.
	c := newTestClient(t, rc, WithWatchdog(2*time.Second, 300*time.Millisecond),
		WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	ctx := testCtx(t, 20*time.Second)
	m := mustMutex(t, c, "wd-mode-panic")
	h, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rc.left.Store(-1)
	time.Sleep(3 * time.Second) // past the 2 s lease: renewals carry it on
	if err := context.Cause(h); err != nil {
		t.Fatalf("the hold ended: %v; log:\n%s", err, logs.String())
	}
	if err := m.Unlock(h); err != nil {
		t.Fatal(err)
	}
}

// A client wrapper whose Nodes panics does not crash the process from the
// Client's background work that asks every node: the eviction-policy check
// (an acquisition without the failover guard) and the guard's replica
// count. The panic is logged, and the nodes taken as ones that did not
// answer.
func TestNodesPanicLogged(t *testing.T) {
	for _, guard := range []bool{false, true} {
		name := "eviction check"
		if guard {
			name = "replica count"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			node := redistest.Server(t)
			var logs syncBuffer
			rc := newPanickyClient(node.Client(t), func(c wrapperCall) bool { return c.method == "Nodes" })
			c := newTestClient(t, rc, WithFailoverGuard(guard, 200*time.Millisecond),
				WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			rc.left.Store(-1)
			ctx := testCtx(t, 20*time.Second)
			m := mustMutex(t, c, "nodes-panic")
			// Uncounted, the guarded acquisition waits for a replica the
			// server does not have: its outcome is not what is looked at.
			if h, err := m.TryLock(ctx, 0); err == nil {
				if err := m.Unlock(h); err != nil {
					t.Fatal(err)
				}
			}
			if !eventually(5*time.Second, func() bool { return strings.Contains(logs.String(), "panic recovered") }) {
				t.Fatalf("the panic of Nodes was not logged; log:\n%s", logs.String())
			}
		})
	}
}
