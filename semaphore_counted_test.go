package scriptlock

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Well under the 2 s fallback poll: a waiter stranded until its poll fails,
// with room for a loaded 2-core machine.
const countedBound = 700 * time.Millisecond

// A release of a PermitSemaphore wakes one of two local waiters, which takes
// the permit with a short lease and keeps it. No message announces that
// lease ending: the other waiter, which the release did not wake, last heard
// of a lease a minute long, and must still take the permit when the short
// one ends, not at its fallback poll.
func TestPermitShortLeaseAfterCountedWake(t *testing.T) {
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	p := mustPermits(t, c, "short-lease")
	if _, err := p.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	held, err := p.Acquire(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	const lease = 150 * time.Millisecond
	got := make(chan time.Time, 2)
	base := acquireCalls(t, node)
	for i := range 2 {
		go func() {
			if _, err := p.Acquire(ctx, lease); err != nil && ctx.Err() == nil {
				t.Error(err)
			}
			got <- time.Now()
		}()
		settleWaiters(t, node, c, p.channel, i+1, base, int64(2*(i+1)))
	}
	if err := p.Release(ctx, held); err != nil {
		t.Fatal(err)
	}
	var first time.Time
	select {
	case first = <-got:
	case <-time.After(countedBound):
		t.Fatalf("no waiter acquired within %s of the release", countedBound)
	}
	select {
	case second := <-got:
		t.Logf("second waiter acquired %s after the first, whose lease was %s", second.Sub(first).Round(time.Millisecond), lease)
	case <-time.After(lease + countedBound):
		t.Fatalf("the first waiter's %s lease ended; the other waiter did not acquire within %s of its acquisition", lease, lease+countedBound)
	}
}

type heldAttemptKey struct{}

// A PermitSemaphore's AddPermits announces the permits it added, not the
// count: two AddPermits(1) in a row announce 1 each. A waiter woken by the
// first is counted again by the second while its attempt is on its way, and
// its caller gives up before the attempt runs: the waiter holds the wakes of
// both, and both must reach the waiters behind it, each of which takes one
// of the two permits at once rather than at its fallback poll.
func TestPermitAddPermitsWakesSurviveWaiterLeaving(t *testing.T) {
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	p := mustPermits(t, c, "add-leave")
	if _, err := p.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Acquire(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	xctx, cancelX := context.WithCancel(context.WithValue(ctx, heldAttemptKey{}, true))
	defer cancelX()
	var armed atomic.Bool
	entered := make(chan struct{}, 1)
	testHookAttempt = func(ctx context.Context) {
		if ctx.Value(heldAttemptKey{}) == nil || !armed.CompareAndSwap(true, false) {
			return
		}
		entered <- struct{}{}
		<-ctx.Done() // the attempt is on its way when its caller gives up
	}
	t.Cleanup(func() { testHookAttempt = nil })
	got := make(chan time.Time, 2)
	base := acquireCalls(t, node)
	xdone := make(chan error, 1)
	go func() {
		_, err := p.Acquire(xctx, time.Minute)
		xdone <- err
	}()
	settleWaiters(t, node, c, p.channel, 1, base, 2)
	for i := range 2 {
		go func() {
			if _, err := p.Acquire(ctx, time.Minute); err != nil && ctx.Err() == nil {
				t.Error(err)
			}
			got <- time.Now()
		}()
		settleWaiters(t, node, c, p.channel, i+2, base, int64(2*(i+2)))
	}
	armed.Store(true)
	if _, err := p.AddPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-entered:
	case <-time.After(countedBound):
		t.Fatalf("the first waiter was not woken within %s of AddPermits(1)", countedBound)
	}
	if _, err := p.AddPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	// The second message reaches the first waiter, whose attempt is held.
	first := func() *waiter {
		c.subs.mu.Lock()
		defer c.subs.mu.Unlock()
		return c.subs.chans[p.channel].waiters[0]
	}()
	for deadline := time.Now().Add(countedBound); ; {
		c.subs.mu.Lock()
		n := len(first.wake)
		c.subs.mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the second AddPermits(1) did not reach the first waiter within %s", countedBound)
		}
		time.Sleep(time.Millisecond)
	}
	at := time.Now()
	cancelX()
	if err := <-xdone; err == nil {
		t.Fatal("the waiter that gave up acquired")
	}
	for i := range 2 {
		select {
		case <-got:
		case <-time.After(countedBound):
			t.Fatalf("2 permits added, the waiter woken by both gave up: %d of the 2 waiters behind it acquired within %s (available: %d)", i, countedBound, countAt(t, node, p.Key()))
		}
	}
	t.Logf("both waiters behind acquired within %s", time.Since(at).Round(time.Millisecond))
}
