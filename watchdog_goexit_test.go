package scriptlock

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestWatchdogRenewalGoexit: a client wrapper that ends the goroutine of a
// watchdog renewal's call once (runtime.Goexit) is taken as one whose
// renewal panicked: logged, made again, and the hold stays held. The
// round's goroutine ended with it, its renewals never scheduled again, and
// the hold was lost at its lease's end.
func TestWatchdogRenewalGoexit(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := newPanickyClient(node.Client(t), scriptNaming("renew-goexit", "Do", "DoMulti"))
	rc.goexit.Store(true)
	var logs syncBuffer
	c := newTestClient(t, rc, WithWatchdog(2*time.Second, 300*time.Millisecond), WithLogger(debugLogger(&logs)))
	ctx := testCtx(t, 20*time.Second)
	m := mustMutex(t, c, "renew-goexit")
	lctx, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pttl := func() int64 {
		ms, err := node.Do(t, "PTTL", m.Key()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	rc.left.Store(1)
	if !eventually(5*time.Second, func() bool { return rc.left.Load() == 0 }) {
		t.Fatal("no renewal was made")
	}
	// The renewal that ended its goroutine sent nothing: the lease's end
	// stays where it is unless renewals made after it go through, each
	// moving it 300 ms on. Compared as the end, not the time left: read
	// just after a renewal, the time left is already the whole lease.
	// A key gone (PTTL -2) has no end: a lease that ran out is no renewal.
	end := func() (time.Time, bool) {
		ms := pttl()
		return time.Now().Add(time.Duration(ms) * time.Millisecond), ms > 0
	}
	after, ok := end()
	if !ok {
		t.Fatalf("the lock is gone after a renewal's call ended its goroutine (hold %v)", context.Cause(lctx))
	}
	if !eventually(3*time.Second, func() bool { e, ok := end(); return ok && e.After(after.Add(time.Second)) }) {
		moved := "the lock gone"
		if e, ok := end(); ok {
			moved = "lease end moved " + e.Sub(after).Round(time.Millisecond).String()
		}
		t.Fatalf("no renewal went through after one whose call ended its goroutine (%s; hold %v)", moved, context.Cause(lctx))
	}
	if err := context.Cause(lctx); err != nil {
		t.Fatalf("hold ended after one renewal's call ended its goroutine: %v", err)
	}
	if !eventually(3*time.Second, func() bool { return strings.Contains(logs.String(), "runtime.Goexit") }) {
		t.Errorf("the renewal's Goexit was not logged; log:\n%s", logs.String())
	}
	if err := m.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
}
