package scriptlock

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestExtendEndedContextBoundsNothing: an Extend called with a context that
// has already ended sends nothing (rueidis refuses it before writing), so
// no script of it can run later: it must not bound the hold's later
// deadlines by its lease, as an Extend of unknown outcome does. Else one
// short Extend made with a stale context ended the hold, extended since
// with a long lease, within that short lease.
func TestExtendEndedContextBoundsNothing(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	m := mustMutex(t, c, "extend-done-ctx")
	ctx := testCtx(t, 30*time.Second)
	lctx, err := m.LockWithLease(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if err := m.Extend(done, lctx, 2*time.Second); err == nil {
		t.Fatal("Extend with an ended context succeeded")
	}
	if err := m.Extend(ctx, lctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	h := lctx.Value(lockCtxKey{}).(*lockCtx).hold
	if left := time.Until(monoTime(h.lossAt.Load())); left < 30*time.Second {
		t.Fatalf("loss deadline %s away after a one-minute Extend: an Extend that sent nothing still bounds the hold", left.Round(time.Millisecond))
	}
}

// TestExtendRefusedUntilContextEndBoundsNothing: an Extend Redis refused
// having run nothing (BUSY: the server ran someone's long script) until its
// context ended ran nothing, nor can it run later: it must not bound the
// hold's later deadlines by its lease.
func TestExtendRefusedUntilContextEndBoundsNothing(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := node.Client(t)
	c := newTestClient(t, rc)
	ctx := testCtx(t, 60*time.Second)
	if err := node.Do(t, "CONFIG", "SET", "busy-reply-threshold", "50").Error(); err != nil {
		t.Fatal(err)
	}
	// An attempt still in flight when the context ends is of unknown
	// outcome (BUSY cleared, it may run), and bounds the hold rightly; on a
	// loaded machine the last attempt may be so cut off. So the case is
	// tried up to three times: one Extend refused with nothing in flight at
	// its end must bound nothing (before the fix, every one did).
	var left time.Duration
	var busyErr error
	for i := range 3 {
		m := mustMutex(t, c, fmt.Sprintf("extend-busy-%d", i))
		lctx, err := m.LockWithLease(ctx, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Extend(ctx, lctx, time.Minute); err != nil { // script loaded
			t.Fatal(err)
		}
		script := slowScript(t, node, 1500*time.Millisecond)
		awaitBusy(t, ctx, rc)
		bctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		busyErr = m.Extend(bctx, lctx, 2*time.Second)
		cancel()
		if busyErr == nil {
			t.Fatal("Extend while the server is busy succeeded")
		}
		script()
		if err := m.Extend(ctx, lctx, time.Minute); err != nil {
			t.Fatal(err)
		}
		h := lctx.Value(lockCtxKey{}).(*lockCtx).hold
		if left = time.Until(monoTime(h.lossAt.Load())); left >= 30*time.Second {
			return
		}
		t.Logf("try %d: loss deadline %s away: the last attempt was cut off in flight", i+1, left.Round(time.Millisecond))
	}
	t.Fatalf("loss deadline %s away after a one-minute Extend: an Extend refused BUSY until its context ended (%v) still bounds the hold", left.Round(time.Millisecond), busyErr)
}
