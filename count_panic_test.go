package scriptlock

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// The replica count a guarded acquisition takes meets a client wrapper
// that panics on INFO: the panic is logged and the count is one that could
// not be taken (the acquisition is guarded, and the next one counts
// again), instead of crashing the process from the goroutine the count
// runs on. Once the wrapper lets INFO through, the count is taken.
func TestReplicaCountPanicLogged(t *testing.T) {
	t.Parallel()
	primary, _ := redistest.Replicated(t)
	rc := newPanickyNodes(primary.Client(t), commandDo("INFO"))
	rc.left.Store(-1)
	var logs syncBuffer
	c := newTestClient(t, rc, loadedGuard(),
		WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	m := mustMutex(t, c, "count-panic")
	ctx := testCtx(t, 20*time.Second)
	l, err := m.TryLock(ctx, 0)
	if err != nil {
		t.Fatalf("TryLock while the count panics: %v", err)
	}
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
	if !eventually(5*time.Second, func() bool { return strings.Contains(logs.String(), "panic recovered") }) {
		t.Fatalf("the count's panic was not logged; log:\n%s", logs.String())
	}
	if c.guard.checked.Load() != 0 {
		t.Fatal("a count was stored though every INFO panicked")
	}
	rc.left.Store(0)
	if l, err = m.TryLock(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
	if c.guard.checked.Load() == 0 || c.replicas(ctx, m.key, 1) != 1 {
		t.Fatalf("no count of one replica once INFO answers: %d", c.replicas(ctx, m.key, 1))
	}
}

// The look at the eviction policy an unguarded acquisition starts meets a
// client wrapper that panics on INFO: the panic is logged, and the Client
// goes on, instead of crashing the process from the look's goroutine.
func TestEvictionCheckPanicLogged(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := newPanickyNodes(node.Client(t), commandDo("INFO"))
	rc.left.Store(-1)
	var logs syncBuffer
	c := newTestClient(t, rc,
		WithFailoverGuard(false, 0), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	m := mustMutex(t, c, "eviction-panic")
	ctx := testCtx(t, 20*time.Second)
	l, err := m.TryLock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
	if !eventually(5*time.Second, func() bool { return strings.Contains(logs.String(), "panic recovered") }) {
		t.Fatalf("the eviction check's panic was not logged; log:\n%s", logs.String())
	}
}
