package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestSettleCatchesLateAttempt: a Lock's attempt hangs on a connection that
// stopped answering; rueidis drops it as dead (ConnWriteTimeout) while the
// attempt is still on its way (held in a proxy), the wait settles the
// attempt on a new connection and goes on, and is granted the lock. When the
// late attempt reaches the server after the owner's Unlock, it grants the
// lock to the owner again: that grant is given back within seconds, as an
// undo's late attempt is, not left to its lease (Mutex, FairMutex, RWMutex's
// write side).
func TestSettleCatchesLateAttempt(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"Mutex", "FairMutex", "RWMutex"} {
		t.Run(kind, func(t *testing.T) { testSettleCatchesLateAttempt(t, kind) })
	}
}

func testSettleCatchesLateAttempt(t *testing.T, kind string) {
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	rc := droppingClient(t, px.Addr)
	prefix := sharedPrefix(t)
	c := newTestClient(t, rc, prefix)
	other := newTestClient(t, node.Client(t), prefix)
	ctx := testCtx(t, 30*time.Second)
	var l, o Locker
	switch kind {
	case "Mutex":
		l, o = mustMutex(t, c, "late-wait"), mustMutex(t, other, "late-wait")
	case "FairMutex":
		l, o = mustFair(t, c, "late-wait"), mustFair(t, other, "late-wait")
	default:
		l, o = mustRW(t, c, "late-wait"), mustRW(t, other, "late-wait")
	}
	lctx, err := l.Lock(ctx) // connection open, scripts loaded
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	type result struct {
		ctx context.Context
		err error
	}
	done := make(chan result, 1)
	px.HoldOpen() // the first attempt hangs there
	go func() {
		lctx, err := l.Lock(ctx)
		done <- result{lctx, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("Lock still waiting 15 s after its connection stopped answering")
	}
	if r.err != nil {
		t.Fatalf("Lock: %v, want the wait to go on past the dropped connection", r.err)
	}
	if err := l.Unlock(r.ctx); err != nil {
		t.Fatal(err)
	}
	px.Thaw() // the attempt reaches the server now
	start := time.Now()
	if !eventually(5*time.Second, func() bool {
		octx, err := o.TryLock(ctx, 0)
		if err != nil {
			return false
		}
		return o.Unlock(octx) == nil
	}) {
		t.Fatalf("TryLock %v after the late attempt reached the server: the lock is still held, want it given back", time.Since(start).Round(time.Millisecond))
	}
	t.Logf("free again %v after the late attempt was let through", time.Since(start).Round(time.Millisecond))
}
