package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A guarded attempt (the script and its WAIT, sent as one pipeline) under a
// context that can be cancelled, whose client wrapper panics: the panic
// reaches TryLock's caller, as it does unguarded or under a context that
// cannot be cancelled (the caller recovers, as net/http does). It ran on
// the goroutine the call is bounded by, and crashed the process. Nothing
// was sent, and the lock can be taken after it.
func TestGuardedSendPanicReachesCaller(t *testing.T) {
	t.Parallel()
	primary, _ := redistest.Replicated(t)
	rc := newPanickyClient(primary.Client(t), scriptsThrough("DoMulti")) // the next pipeline carrying a script call
	c := newTestClient(t, rc, loadedGuard())
	m := mustMutex(t, c, "guard-send-panic")
	ctx, cancel := context.WithCancel(testCtx(t, 20*time.Second))
	defer cancel()
	// The replica count taken: the attempt below is guarded.
	l, err := m.TryLock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
	if s := m.spec(); !c.guarded(ctx, s.cfg, s.key).on() {
		t.Fatal("the guard does not wait on a primary with a replica")
	}
	rc.left.Store(1)
	if p := panicked(func() { _, _ = m.TryLock(ctx, 0) }); p == nil {
		t.Fatal("TryLock did not panic")
	}
	l, err = m.TryLock(ctx, 0)
	if err != nil {
		t.Fatalf("TryLock after the wrapper's panic: %v", err)
	}
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
}
