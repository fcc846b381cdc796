package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// queueDead queues field on f's queue as a waiter that died: its deadline
// passes 100 ms after this call, while the queue keys live on for a minute.
// It is queued first with a minute's timeout, which the keys' expiry takes,
// then called again with 100 ms, which moves its deadline only (an expiry is
// never shortened): queued with 100 ms at once, the keys expire 100 ms later
// with it, and on a loaded machine they did before the test could lengthen
// their expiry, leaving the queue empty.
func queueDead(t *testing.T, f *FairMutex, field string) {
	t.Helper()
	ctx := testCtx(t, 5*time.Second)
	for _, timeout := range []time.Duration{time.Minute, 100 * time.Millisecond} {
		r, err := generated.FairAcquire(ctx, f.m.c.rc, f.m.key, f.queue, f.timeouts, f.m.fence, f.wake,
			time.Minute, field, fairAcquireCtl(true, false, timeout, time.Hour), "publish")
		if err != nil || r >= 0 {
			t.Fatalf("queueing %s: %d, %v; want a refusal", field, r, err)
		}
	}
}

// liveLockAt takes f's lock as owner in the background and sends when.
func liveLockAt(t *testing.T, f *FairMutex, owner string) <-chan time.Time {
	got := make(chan time.Time, 1)
	ctx := testCtx(t, 20*time.Second)
	go func() {
		l, err := f.Lock(WithOwner(ctx, owner))
		if err != nil {
			if ctx.Err() == nil {
				t.Error(err)
			}
			return
		}
		got <- time.Now()
		_ = f.Unlock(l)
	}()
	return got
}

// A ForceUnlock with a dead waiter first in line, its deadline passed (it
// died while the lock was held, when no call evicts), wakes the first live
// waiter: the dead one is evicted first, as a release does. The live waiter
// calls again only every 10 s here, so only a wake is in time.
func TestFairForceUnlockSkipsDeadHead(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	opts := []Option{sharedPrefix(t), WithWaiterTimeout(30 * time.Second)}
	c := newTestClient(t, node.Client(t), opts...)
	ctx := testCtx(t, 20*time.Second)
	f := mustFair(t, c, "force-dead")
	if _, err := f.Lock(WithOwner(ctx, "h")); err != nil {
		t.Fatal(err)
	}
	queueDead(t, f, "0f0e0d0c-0000-4000-8000-000000000000:dead")
	got := liveLockAt(t, mustFair(t, newTestClient(t, node.Client(t), opts...), "force-dead"), "live")
	waitQueueLen(t, node, f, 2)
	time.Sleep(300 * time.Millisecond) // the dead waiter's deadline passes
	start := time.Now()
	if ok, err := f.ForceUnlock(ctx); err != nil || !ok {
		t.Fatalf("ForceUnlock = %v, %v", ok, err)
	}
	select {
	case at := <-got:
		t.Logf("live waiter took the lock %s after the force unlock", at.Sub(start).Round(time.Millisecond))
	case <-time.After(5 * time.Second):
		t.Fatal("the live waiter did not get the lock within 5s of the force unlock: the wake went to the dead waiter ahead of it")
	}
}

// A waiter first in line that gives up after a release woke it (its wait
// or context ended then) passes the lock on to the first live waiter behind
// it, past one that died and whose deadline passed.
func TestFairCancelSkipsDeadWaiter(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	opts := []Option{sharedPrefix(t), WithWaiterTimeout(30 * time.Second)}
	c := newTestClient(t, node.Client(t), opts...)
	ctx := testCtx(t, 20*time.Second)
	f := mustFair(t, c, "cancel-dead")
	hctx, err := f.Lock(WithOwner(ctx, "h"))
	if err != nil {
		t.Fatal(err)
	}
	const leaving = "0f0e0d0c-0000-4000-8000-000000000001:leaving"
	if r, err := generated.FairAcquire(ctx, c.rc, f.m.key, f.queue, f.timeouts, f.m.fence, f.wake,
		time.Minute, leaving, fairAcquireCtl(true, false, time.Minute, time.Hour), "publish"); err != nil || r >= 0 {
		t.Fatalf("queueing the leaving waiter: %d, %v", r, err)
	}
	queueDead(t, f, "0f0e0d0c-0000-4000-8000-000000000000:dead")
	got := liveLockAt(t, mustFair(t, newTestClient(t, node.Client(t), opts...), "cancel-dead"), "live")
	waitQueueLen(t, node, f, 3)
	time.Sleep(300 * time.Millisecond)     // the dead waiter's deadline passes
	if err := f.Unlock(hctx); err != nil { // wakes the leaving waiter, first in line
		t.Fatal(err)
	}
	start := time.Now()
	if err := f.cancelCall(ctx, leaving, -1, "publish", false); err != nil {
		t.Fatal(err)
	}
	select {
	case at := <-got:
		t.Logf("live waiter took the lock %s after the leave", at.Sub(start).Round(time.Millisecond))
	case <-time.After(5 * time.Second):
		t.Fatal("the live waiter did not get the lock within 5s of the leave: the wake went to the dead waiter ahead of it")
	}
}

// In Redisson's queue protocol too, a waiter first in line that gives up
// after a release woke it passes the lock on to the first live waiter behind
// it, past a stale one (its score passed), as a release would: the stale
// one is evicted first, by Redisson's rule.
func TestFairRedissonCancelSkipsStaleWaiter(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	opts := []Option{sharedPrefix(t), WithWaiterTimeout(30 * time.Second), WithRedissonFairQueue(0)}
	c := newTestClient(t, node.Client(t), opts...)
	ctx := testCtx(t, 20*time.Second)
	f := mustFair(t, c, "cancel-stale")
	hctx, err := f.Lock(WithOwner(ctx, "h"))
	if err != nil {
		t.Fatal(err)
	}
	const leaving, stale = "0f0e0d0c-0000-4000-8000-000000000001:1", "0f0e0d0c-0000-4000-8000-000000000000:1"
	for _, field := range []string{leaving, stale} {
		if r, err := generated.FairRedissonAcquire(ctx, c.rc, f.m.key, f.queue, f.timeouts, f.m.fence, f.m.channel,
			time.Minute, field, DefaultRedissonThreadWaitTime, time.Now(), true, time.Hour, "publish", DefaultRedissonThreadWaitTime); err != nil || r.Status != 0 {
			t.Fatalf("queueing %s: %+v, %v", field, r, err)
		}
	}
	got := liveLockAt(t, mustFair(t, newTestClient(t, node.Client(t), opts...), "cancel-stale"), "live")
	waitQueueLen(t, node, f, 3)
	// The second waiter died long ago: its score has passed.
	if err := node.Do(t, "ZADD", f.timeouts, "1", stale).Error(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)     // the live waiter subscribed
	if err := f.Unlock(hctx); err != nil { // wakes the leaving waiter, first in line
		t.Fatal(err)
	}
	start := time.Now()
	if err := f.cancelCall(ctx, leaving, -1, "publish", false); err != nil {
		t.Fatal(err)
	}
	select {
	case at := <-got:
		t.Logf("live waiter took the lock %s after the leave", at.Sub(start).Round(time.Millisecond))
	case <-time.After(5 * time.Second):
		t.Fatal("the live waiter did not get the lock within 5s of the leave: the wake went to the stale waiter ahead of it")
	}
}
