package main

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/layout"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A force-unlock of a FairMutex whose first waiter died while the lock was
// held (its deadline passed, and no call found the lock free to evict it)
// wakes the first live waiter behind it. The live waiter calls again only
// every 20 s here, so only a wake is in time.
func TestForceUnlockFairSkipsDeadHead(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	d := deployment{url: "redis://" + node.Addr, rc: node.Client(t)}
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	const name = "dead-head"
	holder := newClient(t, d.rc, prefix)
	if _, err := mustFair(t, holder, name).Lock(ctx); err != nil {
		t.Fatal(err)
	}
	// The dead waiter: its deadline passes 100 ms after it queued, then it
	// is gone; the queue keys live on for a minute. It is queued with a
	// minute's timeout first, which the keys' expiry takes, then called again
	// with 100 ms, which moves its deadline only (an expiry is never
	// shortened): queued with 100 ms at once, the keys expire with it, on a
	// loaded machine before the test could lengthen their expiry.
	k := layout.For(prefix+name, false)
	const dead = "0f0e0d0c-0000-4000-8000-000000000000:dead"
	for _, ctl := range []string{"e-60000:3600000", "e-100:3600000"} {
		r, err := generated.FairAcquire(ctx, d.rc, k.Lock, k.FairQueue, k.FairTimeouts, k.Fence, k.FairWake,
			time.Minute, dead, ctl, "publish")
		if err != nil || r >= 0 {
			t.Fatalf("queueing the dead waiter: %d, %v; want a refusal", r, err)
		}
	}
	waiter := newClient(t, d.rc, prefix, scriptlock.WithWaiterTimeout(time.Minute))
	got := make(chan time.Time, 1)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		if _, err := mustFair(t, waiter, name).Lock(wctx); err == nil {
			got <- time.Now()
		}
	}()
	// Both queued, the dead waiter first and past its deadline, the live
	// one behind it. Read from the whole queue, stale entries included: on
	// a loaded machine the dead waiter's 100 ms may pass before the live
	// one queues, and it stays first in line all the same (only a call that
	// finds the lock free evicts).
	waitFor(t, ctx, func() bool {
		rep := inspectJSON(t, ctx, d, prefix, name)
		return len(rep.Queue) == 2 && rep.Queue[0].Field == dead && rep.Queue[0].Stale && !rep.Queue[1].Stale &&
			rep.QueueLength == 1 && rep.StaleQueueLength == 1
	})
	start := time.Now()
	if r := cli(ctx, d, "", "force-unlock", "--yes", "--key-prefix", prefix, name); r.code != exitOK {
		t.Fatalf("exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	select {
	case at := <-got:
		t.Logf("the live waiter took the lock %s after the force-unlock", at.Sub(start).Round(time.Millisecond))
	case <-time.After(5 * time.Second):
		t.Fatal("the live waiter did not get the lock within 5s of the force-unlock: the wake went to the dead waiter ahead of it")
	}
}
