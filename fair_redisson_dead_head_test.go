package scriptlock

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// fairLockWith is RFairLock's acquisition (javaFairLock) with a lease and
// a threadWaitTime of the test's own.
func (j redissonJava) fairLockWith(ctx context.Context, name string, lease, threadWait time.Duration) (bool, int64, error) {
	keys := []string{name, redissonName("redisson_lock_queue", name), redissonName("redisson_lock_timeout", name)}
	return nilOrTTL(j.eval(ctx, javaFairLock, keys, strconv.FormatInt(lease.Milliseconds(), 10), j.lockName(),
		strconv.FormatInt(threadWait.Milliseconds(), 10), strconv.FormatInt(time.Now().UnixMilli(), 10)))
}

// A Java waiter that died first in Redisson's queue, its holder's lease run
// out, holds the Go waiter behind it up until its score passes, as it holds
// up a Redisson waiter, and no longer: the Go waiter, told by its reply how
// long until then (the score before its own, as Redisson's waiter is told
// and sleeps), calls again then and evicts it. A Go waiter not first in
// line slept a third of its waiter timeout whatever its reply said, and so
// took the lock up to that long after a Redisson waiter would have.
func TestRedissonFairDeadJavaHeadEvictedOnTime(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	const threadWait = time.Second
	c := newTestClient(t, node.Client(t), WithRedissonFairQueue(threadWait), WithWaiterTimeout(30*time.Second))
	ctx := testCtx(t, 30*time.Second)
	f := mustFair(t, c, "dead-java-head")
	key := f.Key()
	j0, j1 := newRedissonJava(node.Client(t), 1), newRedissonJava(node.Client(t), 2)
	if ok, _, err := j0.fairLockWith(ctx, key, 500*time.Millisecond, threadWait); err != nil || !ok {
		t.Fatalf("J0 lock: ok=%v err=%v", ok, err)
	}
	// J1 queues and dies: its score is J0's lease end plus threadWait.
	if ok, _, err := j1.fairLockWith(ctx, key, 30*time.Second, threadWait); err != nil || ok {
		t.Fatalf("J1 should queue: ok=%v err=%v", ok, err)
	}
	score, err := node.Do(t, "ZSCORE", redissonName("redisson_lock_timeout", key), j1.lockName()).AsInt64()
	if err != nil {
		t.Fatal(err)
	}
	due := time.UnixMilli(score)
	l, err := f.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := time.Now()
	if got.Before(due) {
		t.Fatalf("Go took the lock %s before the dead Java head's score passed", due.Sub(got))
	}
	// Redisson's waiter would call again at the score; a loaded machine
	// may add a round trip or two, not the 10 s of a third of the waiter
	// timeout.
	if late := got.Sub(due); late > 3*time.Second {
		t.Fatalf("Go took the lock %s after the dead Java head's score passed, want it evicted then (within 3s)", late.Round(time.Millisecond))
	}
	if err := f.Unlock(l); err != nil {
		t.Fatal(err)
	}
}
