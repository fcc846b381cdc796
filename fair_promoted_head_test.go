package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A native FairMutex waiter that becomes first in line while it sleeps (the
// head before it took the lock) learns the new holder's lease: when that
// lease is shorter than its polling interval (a third of the waiter
// timeout) and the holder dies, it takes the lock when the lease ends, not
// at its next poll.
func TestFairPromotedHeadLearnsLease(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	// Polling every 4 s: far from when the lease ends, so that a loaded
	// machine's delays do not blur the two.
	mk := func() *FairMutex {
		return mustFair(t, newTestClient(t, node.Client(t), prefix), "fair-promoted-head", WithWaiterTimeout(12*time.Second))
	}
	a, b, c := mk(), mk(), mk()
	ctx := testCtx(t, 20*time.Second)
	actx, err := a.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bGot := make(chan error, 1)
	go func() {
		// Takes the lock when a releases, for 300 ms, and dies with it.
		_, err := b.LockWithLease(ctx, 300*time.Millisecond)
		bGot <- err
	}()
	time.Sleep(200 * time.Millisecond) // b is first in line
	cGot := make(chan time.Time, 1)
	go func() {
		if _, err := c.Lock(ctx); err != nil {
			t.Error(err)
			return
		}
		cGot <- time.Now()
	}()
	time.Sleep(200 * time.Millisecond) // c is second, asleep for 4 s
	released := time.Now()
	if err := a.Unlock(actx); err != nil {
		t.Fatal(err)
	}
	if err := <-bGot; err != nil {
		t.Fatal(err)
	}
	select {
	case at := <-cGot:
		if d := at.Sub(released); d > 2*time.Second {
			t.Fatalf("the next waiter took the lock %s after the release; the holder's 300 ms lease had ended long before", d.Round(time.Millisecond))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the next waiter never took the lock")
	}
}

// A native FairMutex waiter that becomes first in line while it sleeps
// because the head before it gave up its wait (the lock still held) learns
// the holder's lease as well: should the holder die, it takes the lock when
// that lease ends, not at its next poll.
func TestFairHeadLeavingTellsNextOfLease(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	// Polling every 4 s: far from when the lease ends, so that a loaded
	// machine's delays do not blur the two.
	mk := func() *FairMutex {
		return mustFair(t, newTestClient(t, node.Client(t), prefix), "fair-head-leaves", WithWaiterTimeout(12*time.Second))
	}
	a, b, c := mk(), mk(), mk()
	ctx := testCtx(t, 20*time.Second)
	// The holder dies with its 800 ms lease.
	start := time.Now()
	if _, err := a.LockWithLease(ctx, 800*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	bGot := make(chan error, 1)
	go func() {
		_, err := b.TryLock(ctx, 300*time.Millisecond) // first in line, gives up
		bGot <- err
	}()
	time.Sleep(100 * time.Millisecond)
	cGot := make(chan time.Time, 1)
	go func() {
		if _, err := c.Lock(ctx); err != nil {
			t.Error(err)
			return
		}
		cGot <- time.Now()
	}()
	if err := <-bGot; err == nil {
		t.Fatal("the first waiter took a held lock")
	}
	select {
	case at := <-cGot:
		if d := at.Sub(start); d > 2500*time.Millisecond {
			t.Fatalf("the next waiter took the lock %s after the holder's 800 ms lease began", d.Round(time.Millisecond))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the next waiter never took the lock")
	}
}
