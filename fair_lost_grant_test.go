package scriptlock

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// A queue head whose grant's reply is lost with its connection keeps its
// place, in either queue protocol: the undo of the grant it cannot vouch for
// puts it back first in line instead of handing the lock to the waiter
// behind it, and its next attempt takes the lock.
func TestFairLostGrantKeepsPlace(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"Native", "Redisson"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			var opts []Option
			if kind == "Redisson" {
				opts = append(opts, WithRedissonFairQueue(0))
			}
			testFairLostGrant(t, kind == "Redisson", opts...)
		})
	}
}

func testFairLostGrant(t *testing.T, redisson bool, opts ...Option) {
	opts = append(opts, sharedPrefix(t), WithWaiterTimeout(3*time.Second))
	p := newProxied(t, opts...)
	node := p.node
	other := newTestClient(t, node.Client(t), opts...)
	ctx := testCtx(t, 20*time.Second)
	holder, w, x := mustFair(t, other, "lost-grant"), mustFair(t, p.c, "lost-grant"), mustFair(t, other, "lost-grant")
	hctx, err := holder.Lock(WithOwner(ctx, "h"))
	if err != nil {
		t.Fatal(err)
	}
	// w's attempt after the unlock has its reply held back.
	rc := node.Client(t)
	var armed atomic.Bool
	frozen := make(chan struct{})
	p.c.setAttemptHook(func(ctx context.Context, after bool) {
		if after || ownerIn(ctx) != "w" || !armed.Load() {
			return
		}
		if n, err := rc.Do(ctx, rc.B().Exists().Key(holder.Key()).Build()).AsInt64(); err != nil || n != 0 {
			return // a poll while the lock is still held
		}
		if armed.CompareAndSwap(true, false) {
			p.px.FreezeReplies()
			close(frozen)
		}
	})
	t.Cleanup(func() { p.c.setAttemptHook(nil) })
	order := make(chan string, 2)
	lockThen := func(f *FairMutex, owner string) {
		lctx, err := f.Lock(WithOwner(ctx, owner))
		if err != nil {
			order <- owner + ": " + err.Error()
			return
		}
		order <- owner
		time.Sleep(300 * time.Millisecond)
		_ = f.Unlock(lctx)
	}
	go lockThen(w, "w")
	waitQueueLen(t, node, holder, 1)
	go lockThen(x, "x")
	waitQueueLen(t, node, holder, 2)
	time.Sleep(100 * time.Millisecond) // both subscribed
	xField := other.ID() + ":x"
	score := func() int64 {
		v, err := node.Do(t, "ZSCORE", holder.timeouts, xField).AsInt64()
		if err != nil {
			t.Fatalf("ZSCORE x: %v", err)
		}
		return v
	}
	var before int64
	if redisson {
		before = score()
	}
	armed.Store(true)
	if err := holder.Unlock(hctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-frozen:
	case <-time.After(5 * time.Second):
		t.Fatal("w was not woken")
	}
	wField := p.c.ID() + ":w"
	if !eventually(3*time.Second, func() bool {
		n, _ := node.Do(t, "HEXISTS", holder.Key(), wField).AsInt64()
		return n == 1
	}) {
		p.px.Thaw()
		t.Fatal("w's attempt did not take the lock")
	}
	p.px.DropAll() // the grant's reply is lost with its connection
	p.px.Thaw()
	first := <-order
	if redisson && first == "w" {
		// One grant from the queue lowered x's score by w's waitTime, once.
		if after, want := score(), before-DefaultRedissonThreadWaitTime.Milliseconds(); after != want {
			t.Errorf("x's score %d while w holds, want %d (lowered once by w's waitTime)", after, want)
		}
	}
	if second := <-order; first != "w" || second != "x" {
		t.Fatalf("lock order %q then %q, want w (first in line) then x", first, second)
	}
}
