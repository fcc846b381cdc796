package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A permit acquisition of unknown outcome can reach the server after the
// undo that was to give its permit back (the undo goes out on a new
// connection while the attempt is still on its way, here held in a proxy).
// The late attempt must not take the permit: nobody would release it before
// its lease ran out.
func TestPermitUndoCatchesLateAttempt(t *testing.T) {
	t.Parallel()
	px, s, watch, ctx := proxiedPermit(t, "late")
	if id, err := s.Acquire(ctx, time.Minute); err != nil || s.Release(ctx, id) != nil {
		t.Fatalf("warm-up: %v", err) // connection open, scripts loaded
	}
	px.HoldOpen()
	tctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err := s.TryAcquire(tctx, time.Minute, 0)
	cancel()
	if err == nil {
		t.Fatal("TryAcquire through a held connection succeeded")
	}
	time.Sleep(500 * time.Millisecond) // the undo has run, on a new connection
	px.Thaw()                          // the attempt reaches the server now
	time.Sleep(5 * time.Second)        // any look again is over
	st, err := watch.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Available != 1 || st.Held != 0 {
		t.Fatalf("after the late attempt reached the server: %d available, %d held; want 1 available, 0 held (the permit is kept for its one-minute lease)", st.Available, st.Held)
	}
}

// proxiedPermit is a PermitSemaphore name holding one permit, seen through
// s, whose Client reaches the server through px, and through other, whose
// Client reaches it directly; ctx ends in 30 s.
func proxiedPermit(t *testing.T, name string) (px *netproxy.Proxy, s, other *PermitSemaphore, ctx context.Context) {
	t.Helper()
	node := redistest.Server(t)
	px = netproxy.New(t, node.Addr)
	prefix := sharedPrefix(t)
	s = mustPermits(t, newTestClient(t, px.Client(t), prefix), name)
	other = mustPermits(t, newTestClient(t, node.Client(t), prefix), name)
	ctx = testCtx(t, 30*time.Second)
	if ok, err := s.TrySetPermits(ctx, 1); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	return px, s, other, ctx
}
