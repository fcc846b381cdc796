package scriptlock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestFairSharedOwnerCancelKeepsPlace: two goroutines wait under one owner
// (WithOwner), so they share one place in the queue. When one of them gives
// up, the other keeps that place: it gets the lock before a waiter that
// queued after both.
func TestFairSharedOwnerCancelKeepsPlace(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	ca := newTestClient(t, node.Client(t), prefix)
	cb := newTestClient(t, node.Client(t), prefix)
	cc := newTestClient(t, node.Client(t), prefix)
	ctx := testCtx(t, 30*time.Second)
	holder := mustFair(t, ca, "shared-wait")
	hctx, err := holder.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fb := mustFair(t, cb, "shared-wait")
	fc := mustFair(t, cc, "shared-wait")

	var mu sync.Mutex
	var order []string
	got := func(who string) {
		mu.Lock()
		order = append(order, who)
		mu.Unlock()
	}
	var wg sync.WaitGroup
	g1ctx, cancelG1 := context.WithCancel(WithOwner(ctx, "x"))
	defer cancelG1()
	g1done := make(chan error, 1)
	go func() {
		_, err := fb.Lock(g1ctx)
		g1done <- err
	}()
	waitQueueLen(t, node, holder, 1)
	wg.Add(2)
	go func() {
		defer wg.Done()
		l, err := fb.Lock(WithOwner(ctx, "x"))
		if err != nil {
			t.Errorf("second goroutine of owner x: %v", err)
			return
		}
		got("x")
		time.Sleep(50 * time.Millisecond)
		if err := fb.Unlock(l); err != nil {
			t.Errorf("owner x Unlock: %v", err)
		}
	}()
	// Its first attempt finds owner x already queued and keeps that place.
	time.Sleep(300 * time.Millisecond)
	go func() {
		defer wg.Done()
		l, err := fc.Lock(WithOwner(ctx, "y"))
		if err != nil {
			t.Errorf("owner y: %v", err)
			return
		}
		got("y")
		if err := fc.Unlock(l); err != nil {
			t.Errorf("owner y Unlock: %v", err)
		}
	}()
	waitQueueLen(t, node, holder, 2)

	cancelG1()
	if err := <-g1done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Lock of owner x = %v, want context.Canceled", err)
	}
	time.Sleep(100 * time.Millisecond) // leaving the line is done by then
	if n := queueLen(t, node, holder); n != 2 {
		t.Errorf("queue length %d after one of owner x's goroutines gave up, want 2: the other still waits there", n)
	}
	if err := holder.Unlock(hctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if len(order) != 2 || order[0] != "x" {
		t.Fatalf("acquisition order %v, want [x y]: owner x's waiting goroutine lost its place when the other gave up", order)
	}
}

// TestSharedOwnerWaitersWokenTogether: a release that names an owner wakes
// every goroutine waiting under that owner; the first is granted the lock
// and the others re-enter it, without waiting for their fallback timers.
// In Redisson's queue protocol the release's "0" on the owner's own channel
// does the same.
func TestSharedOwnerWaitersWokenTogether(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"Mutex", "FairMutex", "FairRedisson"} {
		t.Run(kind, func(t *testing.T) {
			node := redistest.Server(t)
			prefix := sharedPrefix(t)
			ca := newTestClient(t, node.Client(t), prefix)
			cb := newTestClient(t, node.Client(t), prefix)
			ctx := testCtx(t, 30*time.Second)
			// A long waiter timeout: the fallback poll comes after 10 s.
			opt := WithWaiterTimeout(30 * time.Second)
			var holder, waiter Locker
			switch kind {
			case "Mutex":
				holder, waiter = mustMutex(t, ca, "together", opt), mustMutex(t, cb, "together", opt)
			case "FairMutex":
				holder, waiter = mustFair(t, ca, "together", opt), mustFair(t, cb, "together", opt)
			default:
				rq := WithRedissonFairQueue(0)
				holder, waiter = mustFair(t, ca, "together", opt, rq), mustFair(t, cb, "together", opt, rq)
			}
			hctx, err := holder.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got := make(chan time.Time, 2)
			var wg sync.WaitGroup
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					l, err := waiter.Lock(WithOwner(ctx, "x"))
					if err != nil {
						t.Errorf("owner x: %v", err)
						return
					}
					got <- time.Now()
					<-l.Done() // held until the test ends
				}()
			}
			time.Sleep(300 * time.Millisecond) // both have tried and wait
			released := time.Now()
			if err := holder.Unlock(hctx); err != nil {
				t.Fatal(err)
			}
			for i := range 2 {
				select {
				case at := <-got:
					if d := at.Sub(released); d > 3*time.Second {
						t.Fatalf("goroutine %d of owner x got the lock %s after the release", i+1, d)
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("only %d of owner x's 2 waiting goroutines got the lock within 5 s of the release (their fallback is 10 s)", i)
				}
			}
			// Each goroutine holds once: end both holds.
			for range 2 {
				if err := waiter.Unlock(WithOwner(ctx, "x")); err != nil {
					t.Fatalf("Unlock of owner x: %v", err)
				}
			}
			wg.Wait()
		})
	}
}
