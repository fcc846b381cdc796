package scriptlock

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// The only permit changes hands outside this Client: its holder releases it
// (announcing 1) and another process takes it with a short lease before the
// waiter the message woke gets there. That waiter is refused and hears of the
// short lease; the Client's other waiter, which the message did not wake,
// knows only the minute-long lease it heard of before. The first waiter's
// caller then gives up: the other must still take the permit when the short
// lease ends, not at its fallback poll.
func TestPermitLeaseHeardByWaiterThatGivesUp(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	p := mustPermits(t, c, "heard-lease")
	if _, err := p.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	held, err := p.Acquire(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	base := acquireCalls(t, node)
	actx, cancelA := context.WithCancel(ctx)
	defer cancelA()
	aDone := make(chan error, 1)
	go func() {
		_, err := p.Acquire(actx, time.Minute)
		aDone <- err
	}()
	settleWaiters(t, node, c, p.channel, 1, base, 2)
	got := acquiredAt(t, ctx, p)
	settleWaiters(t, node, c, p.channel, 2, base, 4)
	// Released, and taken by another process with a 300 ms lease, as one
	// script: the woken waiter's attempt comes after both.
	const lease = 300 * time.Millisecond
	heldWire, _ := permitWire(held)
	otherWire, _ := permitWire(randomID())
	node.Do(t, "EVAL", `local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('zrem', KEYS[2], ARGV[1])
redis.call('zadd', KEYS[2], now + tonumber(ARGV[3]), ARGV[2])
redis.call('publish', KEYS[3], 1)`, "3", p.Key(), p.timeouts, p.channel, string(heldWire), string(otherWire), "300")
	handed := time.Now()
	// The woken waiter is refused, then its caller gives up.
	for deadline := time.Now().Add(countedBound); acquireCalls(t, node)-base < 5; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no waiter was woken within %s of the message", countedBound)
		}
	}
	time.Sleep(20 * time.Millisecond)
	cancelA()
	if err := <-aDone; err == nil {
		t.Fatal("the waiter that gave up acquired")
	}
	select {
	case at := <-got:
		t.Logf("the other waiter acquired %s after the permit changed hands (lease %s)", at.Sub(handed).Round(time.Millisecond), lease)
	case <-time.After(time.Until(handed.Add(lease + countedBound))):
		t.Fatalf("a permit taken elsewhere with a %s lease; the waiter that heard of it gave up, and the other waiter did not acquire within %s of its lease's end", lease, countedBound)
	}
}

// Another Client (another process) cuts the lease of the permit it holds
// with Extend: nothing that Client knows of reaches this Client's waiter,
// which heard of a minute-long lease and must still take the permit when
// the short one ends, not at its fallback poll.
func TestPermitExtendShorterWakesOtherClient(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	holder := newTestClient(t, node.Client(t), prefix)
	c := newTestClient(t, node.Client(t), prefix)
	ctx := testCtx(t, 30*time.Second)
	hp, p := mustPermits(t, holder, "extend-other"), mustPermits(t, c, "extend-other")
	if _, err := hp.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	held, err := hp.Acquire(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	base := acquireCalls(t, node)
	got := acquiredAt(t, ctx, p)
	settleWaiters(t, node, c, p.channel, 1, base, 2)
	const lease = 200 * time.Millisecond
	if err := hp.Extend(ctx, held, lease); err != nil {
		t.Fatal(err)
	}
	cut := time.Now()
	select {
	case at := <-got:
		t.Logf("the other Client's waiter acquired %s after the lease was cut to %s", at.Sub(cut).Round(time.Millisecond), lease)
	case <-time.After(lease + countedBound):
		t.Fatalf("another Client cut a held permit's lease to %s with Extend; the waiter did not acquire within %s", lease, lease+countedBound)
	}
}

// A permit whose lease ended while nobody called stays in the zset, first,
// until an acquisition reclaims it: the waiters, which heard of a later end,
// do not know it is free. Extend of another permit to the soonest live lease
// must still publish, or they sleep past both to their fallback poll.
func TestPermitExtendPublishesPastAnEndedLease(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	holder := newTestClient(t, node.Client(t), prefix)
	c := newTestClient(t, node.Client(t), prefix)
	ctx := testCtx(t, 30*time.Second)
	hp, p := mustPermits(t, holder, "extend-past-ended"), mustPermits(t, c, "extend-past-ended")
	if _, err := hp.TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	kept, err := hp.Acquire(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	ended, err := hp.Acquire(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	base := acquireCalls(t, node)
	got := acquiredAt(t, ctx, p)
	settleWaiters(t, node, c, p.channel, 1, base, 2)
	// Cut without a message, as Redisson's updateLeaseTime does, and let it
	// end: nobody calls, so the permit is not reclaimed.
	endedWire, _ := permitWire(ended)
	node.Do(t, "EVAL", `local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('zadd', KEYS[1], 'xx', now + 20, ARGV[1])`, "1", p.timeouts, string(endedWire))
	time.Sleep(100 * time.Millisecond)
	const lease = 200 * time.Millisecond
	if err := hp.Extend(ctx, kept, lease); err != nil {
		t.Fatal(err)
	}
	cut := time.Now()
	select {
	case at := <-got:
		t.Logf("the waiter acquired %s after the Extend", at.Sub(cut).Round(time.Millisecond))
	case <-time.After(lease + countedBound):
		t.Fatalf("Extend cut the soonest live lease to %s while an ended lease was not yet reclaimed; the waiter did not acquire within %s", lease, lease+countedBound)
	}
}

// A lease of the longest Duration (a permit kept for good) is no lease
// ending now: extending to it must not arm the Client's lease timer in the
// past, which woke a waiter at once for an attempt that could only be
// refused.
func TestPermitLongestLeaseWakesNobody(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	p := mustPermits(t, c, "longest-lease")
	if _, err := p.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	held, err := p.Acquire(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	base := acquireCalls(t, node)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = p.Acquire(wctx, time.Minute)
	}()
	defer func() { cancel(); <-done }()
	// Refused, told of a minute-long lease: it sleeps to its 2 s fallback.
	settleWaiters(t, node, c, p.channel, 1, base, 2)
	if err := p.Extend(ctx, held, time.Duration(math.MaxInt64)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if n := acquireCalls(t, node) - base - 2; n != 0 {
		t.Fatalf("extending a permit to the longest lease woke the waiter: %d attempts within 300ms", n)
	}
}
