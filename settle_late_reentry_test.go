package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A waiting re-entry with a short lease of a hold the watchdog renews sets
// the watchdog's lease: when one of its attempts hangs on a connection
// rueidis drops as dead, is settled, and reaches the server only after the
// owner released every hold, it grants the lock afresh with that longer
// lease. The Client looks again for such a grant as long as that lease,
// not the re-entry's own: the lock is given back within seconds, not left
// to the watchdog's lease.
func TestSettleCatchesLateWatchdogReentry(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"Mutex", "FairMutex"} {
		t.Run(kind, func(t *testing.T) { testSettleCatchesLateWatchdogReentry(t, kind) })
	}
}

func testSettleCatchesLateWatchdogReentry(t *testing.T, kind string) {
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	rc := droppingClient(t, px.Addr)
	prefix := sharedPrefix(t)
	c := newTestClient(t, rc, prefix)
	other := newTestClient(t, node.Client(t), prefix)
	ctx := testCtx(t, 60*time.Second)
	type leased interface {
		Locker
		LockWithLease(context.Context, time.Duration) (context.Context, error)
	}
	var l leased
	var o Locker
	switch kind {
	case "Mutex":
		l, o = mustMutex(t, c, "late-reenter"), mustMutex(t, other, "late-reenter")
	default:
		l, o = mustFair(t, c, "late-reenter"), mustFair(t, other, "late-reenter")
	}
	warmShared(t, l) // connection open, scripts loaded
	octx := WithOwner(ctx, "job")
	outer, err := l.Lock(octx)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		ctx context.Context
		err error
	}
	done := make(chan result, 1)
	px.HoldOpen() // the re-entry's first attempt hangs there
	go func() {
		lctx, err := l.LockWithLease(octx, 300*time.Millisecond)
		done <- result{lctx, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("the re-entry still waiting 15 s after its connection stopped answering")
	}
	if r.err != nil {
		t.Fatalf("re-entry: %v, want the wait to go on past the dropped connection", r.err)
	}
	if err := l.Unlock(r.ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.Unlock(outer); err != nil {
		t.Fatal(err)
	}
	// Past the first look again (0.25 s after the re-entry returned).
	time.Sleep(400 * time.Millisecond)
	px.Thaw() // the attempt reaches the server now, and is granted afresh
	start := time.Now()
	if !eventually(6*time.Second, func() bool {
		octx, err := o.TryLock(ctx, 0)
		if err != nil {
			return false
		}
		return o.Unlock(octx) == nil
	}) {
		t.Fatalf("TryLock %v after the late attempt reached the server: the lock is still held (PTTL %d ms), want it given back",
			time.Since(start).Round(time.Millisecond), pttlOf(t, node, l.(interface{ Key() string }).Key()))
	}
	t.Logf("free again %v after the late attempt was let through", time.Since(start).Round(time.Millisecond))
}
