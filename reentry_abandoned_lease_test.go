package scriptlock

import (
	"context"
	"testing"
	"time"
)

// TestGuardedReentryAbandonedLease: a guarded re-entry of a Mutex hold with
// a shorter lease, let go at its context's end, may still reach the server
// after a later Extend with a longer lease, sent on another pooled
// connection, and after its undo has stopped looking for it; it then sets
// its shorter lease last (a Mutex re-entry sets the lock's expiry to its own
// lease). That Extend must not move the hold's loss deadline past it.
func TestGuardedReentryAbandonedLease(t *testing.T) {
	t.Parallel()
	px, c, direct, ctx := guardedAbandonRig(t)
	m := mustMutex(t, c, "reentry-abandoned")
	key, err := lockKey(c.cfg.prefix, "reentry-abandoned")
	if err != nil {
		t.Fatal(err)
	}
	lctx, err := m.LockWithLease(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Extend(ctx, lctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	// The connection that carries the re-entry (its lease, in ms) is held
	// up from there on; the others flow.
	short := 4 * time.Second
	px.HoldOn("4000")
	cctx, cancel := context.WithTimeout(lctx, 100*time.Millisecond)
	_, err = m.LockWithLease(cctx, short)
	cancel()
	if err == nil {
		t.Fatal("re-entry on a held connection succeeded")
	}
	if !px.HeldOn() {
		t.Fatal("the re-entry was not held up")
	}
	if err := m.Extend(ctx, lctx, time.Minute); err != nil {
		t.Fatalf("Extend on a new connection: %v", err)
	}
	// Past the undo's last look (undoRecheck).
	var wait time.Duration
	for _, d := range undoRecheck {
		wait += d
	}
	time.Sleep(wait + time.Second)
	awaitLossBy(t, lctx, lateShortLease(ctx, t, px, direct, key, lctx, short, "re-entry"))
}
