package scriptlock

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An Extend to a shorter lease moves the scores of Redisson's fair queue
// earlier, but never below the head's own deadline under the new lease (new
// expiry plus threadWaitTime), as a re-entry to that lease does: a waiter
// queued before the expiry was pushed out (a longer Extend, or renewals)
// would otherwise get a score already past, and the next caller, a newcomer,
// would evict that live waiter and queue ahead of it. The same holds for a
// Mutex on the name, whose Extend moves the same queue's scores (by
// Redisson's default threadWaitTime, which its Java waiters use here).
func TestFairRedissonShorterExtendKeepsWaiter(t *testing.T) {
	type extendable interface {
		TryLockWithLease(ctx context.Context, wait, lease time.Duration) (context.Context, error)
		Extend(ctx, lctx context.Context, lease time.Duration) error
		Unlock(ctx context.Context) error
	}
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	for _, tc := range []struct {
		name string
		lock func(name string) (extendable, string)
	}{
		{"FairMutex", func(name string) (extendable, string) {
			f := mustFair(t, c, name, WithRedissonFairQueue(DefaultRedissonThreadWaitTime))
			return f, f.Key()
		}},
		{"Mutex", func(name string) (extendable, string) {
			m := mustMutex(t, c, name)
			return m, m.Key()
		}},
	} {
		l, key := tc.lock("extend-keeps-waiter-" + tc.name)
		first, newcomer := newRedissonJava(node.Client(t), 1), newRedissonJava(node.Client(t), 2)
		lctx, err := l.TryLockWithLease(ctx, 0, 20*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if acquired, _, err := first.fairLock(ctx, key); err != nil || acquired {
			t.Fatalf("%s: Java fair lock: acquired %v, %v; want queued", tc.name, acquired, err)
		}
		if err := l.Extend(ctx, lctx, time.Hour); err != nil {
			t.Fatal(err)
		}
		const lease = 2 * time.Second
		if err := l.Extend(ctx, lctx, lease); err != nil {
			t.Fatal(err)
		}
		if acquired, _, err := newcomer.fairLock(ctx, key); err != nil || acquired {
			t.Fatalf("%s: second Java fair lock: acquired %v, %v; want queued", tc.name, acquired, err)
		}
		queue, err := c.rc.Do(ctx, c.rc.B().Lrange().Key(redissonName("redisson_lock_queue", key)).Start(0).Stop(-1).Build()).AsStrSlice()
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{first.lockName(), newcomer.lockName()}; strings.Join(queue, " ") != strings.Join(want, " ") {
			t.Errorf("%s: queue after the shorter Extend and a newcomer: %q; want %q (the waiter queued first kept its place)", tc.name, queue, want)
		}
		acquired, ttl, err := first.fairLock(ctx, key)
		if err != nil || acquired {
			t.Fatalf("%s: Java fair lock again: acquired %v, %v; want refused", tc.name, acquired, err)
		}
		if ttl < 0 || ttl > lease.Milliseconds() {
			t.Errorf("%s: the head, asking again, reads %d ms; want the new TTL, from 0 to %d", tc.name, ttl, lease.Milliseconds())
		}
		if err := l.Unlock(lctx); err != nil {
			t.Fatal(err)
		}
	}
}

// A Mutex's nested Unlock that sets the expiry back to the shorter outer
// lease moves the scores of RFairLock waiters on its name no further than
// an Extend to that lease does: the waiter queued under the outer lease
// keeps its place.
func TestMutexNestedUnlockKeepsRedissonFairWaiter(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	m := mustMutex(t, c, "mutex-nested-keeps-waiter")
	first, newcomer := newRedissonJava(node.Client(t), 1), newRedissonJava(node.Client(t), 2)
	outer, err := m.TryLockWithLease(ctx, 0, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if acquired, _, err := first.fairLock(ctx, m.Key()); err != nil || acquired {
		t.Fatalf("Java fair lock: acquired %v, %v; want queued", acquired, err)
	}
	inner, err := m.TryLockWithLease(outer, 0, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(inner); err != nil {
		t.Fatal(err)
	}
	if acquired, _, err := newcomer.fairLock(ctx, m.Key()); err != nil || acquired {
		t.Fatalf("second Java fair lock: acquired %v, %v; want queued", acquired, err)
	}
	queue, err := c.rc.Do(ctx, c.rc.B().Lrange().Key(redissonName("redisson_lock_queue", m.Key())).Start(0).Stop(-1).Build()).AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{first.lockName(), newcomer.lockName()}; strings.Join(queue, " ") != strings.Join(want, " ") {
		t.Errorf("queue after the nested Unlock and a newcomer: %q; want %q (the waiter queued first kept its place)", queue, want)
	}
	if err := m.Unlock(outer); err != nil {
		t.Fatal(err)
	}
}
