package scriptlock

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A re-entry of a FairMutex hold on Redisson's queue with a shorter lease
// sets the lock's expiry to that lease, as an Extend to it does: the head of
// the queue, an RFairLock thread sleeping on the longer TTL it was told, is
// sent "0" on its own channel, and reads the new TTL when it asks again
// (every score moved earlier by as much), so that it does not sleep out the
// old lease should the holder die. A re-entry with a longer lease tells
// nobody.
func TestFairRedissonShorterReentryTellsHead(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	for _, name := range []string{"reentry-shorter", "reentry-shorter:{7}"} {
		f := mustFair(t, c, name, WithRedissonFairQueue(time.Minute))
		j := newRedissonJava(node.Client(t), 1)
		head := j.fairChannel(f.Key())
		log := listen(t, node, head)

		outer, err := f.TryLockWithLease(ctx, 0, 20*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if acquired, ttl, err := j.fairLock(ctx, f.Key()); err != nil || acquired || ttl < 15000 {
			t.Fatalf("%s: Java fair lock: acquired %v, ttl %d, %v; want refused for about 20 s", name, acquired, ttl, err)
		}
		longer, err := f.TryLockWithLease(outer, 0, 25*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		log.quiet(t, 300*time.Millisecond) // a later expiry
		const lease = 2 * time.Second
		inner, err := f.TryLockWithLease(outer, 0, lease)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := log.next(t, time.Second), head+" 0"; got != want {
			t.Errorf("%s: re-entry to an earlier expiry: heard %q, want %q", name, got, want)
		}
		acquired, ttl, err := j.fairLock(ctx, f.Key())
		if err != nil || acquired {
			t.Fatalf("%s: Java fair lock: acquired %v, %v; want refused", name, acquired, err)
		}
		if ttl > lease.Milliseconds() {
			t.Errorf("%s: the head of Redisson's fair queue, asking again on its wake, reads %d ms; want the new TTL, at most %d", name, ttl, lease.Milliseconds())
		}
		if err := f.Unlock(inner); err != nil {
			t.Fatal(err)
		}
		if err := f.Unlock(longer); err != nil {
			t.Fatal(err)
		}
		if err := f.Unlock(outer); err != nil {
			t.Fatal(err)
		}
	}
}

// A re-entry to a shorter lease moves the queued scores earlier, but never
// below the head's own deadline under the new lease (new expiry plus the
// wait): a waiter queued before the expiry was pushed out (a longer
// re-entry, or renewals) would otherwise get a score already past, and the
// next caller, a newcomer too, would evict that live waiter and queue ahead
// of it.
func TestFairRedissonShorterReentryKeepsWaiter(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	f := mustFair(t, c, "reentry-keeps-waiter", WithRedissonFairQueue(DefaultRedissonThreadWaitTime))
	first, newcomer := newRedissonJava(node.Client(t), 1), newRedissonJava(node.Client(t), 2)
	outer, err := f.TryLockWithLease(ctx, 0, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if acquired, _, err := first.fairLock(ctx, f.Key()); err != nil || acquired {
		t.Fatalf("Java fair lock: acquired %v, %v; want queued", acquired, err)
	}
	if _, err := f.TryLockWithLease(outer, 0, time.Hour); err != nil {
		t.Fatal(err)
	}
	const lease = 2 * time.Second
	if _, err := f.TryLockWithLease(outer, 0, lease); err != nil {
		t.Fatal(err)
	}
	if acquired, _, err := newcomer.fairLock(ctx, f.Key()); err != nil || acquired {
		t.Fatalf("second Java fair lock: acquired %v, %v; want queued", acquired, err)
	}
	queue, err := c.rc.Do(ctx, c.rc.B().Lrange().Key(redissonName("redisson_lock_queue", f.Key())).Start(0).Stop(-1).Build()).AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{first.lockName(), newcomer.lockName()}; strings.Join(queue, " ") != strings.Join(want, " ") {
		t.Fatalf("queue after the shorter re-entry and a newcomer: %q; want %q (the waiter queued first kept its place)", queue, want)
	}
	acquired, ttl, err := first.fairLock(ctx, f.Key())
	if err != nil || acquired {
		t.Fatalf("Java fair lock again: acquired %v, %v; want refused", acquired, err)
	}
	if ttl < 0 || ttl > lease.Milliseconds() {
		t.Errorf("the head, asking again, reads %d ms; want the new TTL, from 0 to %d", ttl, lease.Milliseconds())
	}
}

// A nested Unlock that sets the expiry back to the shorter outer lease moves
// the queued scores earlier no further than a re-entry to that lease does:
// the waiter queued under the outer lease keeps its place.
func TestFairRedissonNestedUnlockKeepsWaiter(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	f := mustFair(t, c, "nested-unlock-keeps-waiter", WithRedissonFairQueue(DefaultRedissonThreadWaitTime))
	first, newcomer := newRedissonJava(node.Client(t), 1), newRedissonJava(node.Client(t), 2)
	const lease = 2 * time.Second
	outer, err := f.TryLockWithLease(ctx, 0, lease)
	if err != nil {
		t.Fatal(err)
	}
	if acquired, _, err := first.fairLock(ctx, f.Key()); err != nil || acquired {
		t.Fatalf("Java fair lock: acquired %v, %v; want queued", acquired, err)
	}
	inner, err := f.TryLockWithLease(outer, 0, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Unlock(inner); err != nil {
		t.Fatal(err)
	}
	if acquired, _, err := newcomer.fairLock(ctx, f.Key()); err != nil || acquired {
		t.Fatalf("second Java fair lock: acquired %v, %v; want queued", acquired, err)
	}
	queue, err := c.rc.Do(ctx, c.rc.B().Lrange().Key(redissonName("redisson_lock_queue", f.Key())).Start(0).Stop(-1).Build()).AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{first.lockName(), newcomer.lockName()}; strings.Join(queue, " ") != strings.Join(want, " ") {
		t.Fatalf("queue after the nested Unlock and a newcomer: %q; want %q (the waiter queued first kept its place)", queue, want)
	}
	if err := f.Unlock(outer); err != nil {
		t.Fatal(err)
	}
}
