package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Two MultiLocks over the same locks, one of them nested in a MultiLock of
// its own, take them in one order all the same: ml1 = {a, {b}} and
// ml2 = {b, {a}} must not take a then b and b then a. a is a FairMutex, so
// its waiters are served in order: ml1 queues for it first, then ml2.
// Taking b before it queues, ml2 would hold b while ml1, granted a, waits
// for b: both would wait out their member wait and fail, with both locks
// free the whole time but for each other.
func TestMultiLockNestedOrder(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	ctx := testCtx(t, 30*time.Second)
	c1 := newTestClient(t, node.Client(t), prefix)
	c2 := newTestClient(t, node.Client(t), prefix)
	c3 := newTestClient(t, node.Client(t), prefix)
	const memberWait = 10 * time.Second
	ml1 := mustMulti(t, []Locker{mustFair(t, c1, "a"), mustMulti(t, []Locker{mustMutex(t, c1, "b")})}, WithMemberWait(memberWait))
	ml2 := mustMulti(t, []Locker{mustMutex(t, c2, "b"), mustMulti(t, []Locker{mustFair(t, c2, "a")})}, WithMemberWait(memberWait))
	holder := mustFair(t, c3, "a")
	hctx, err := holder.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const wait = 3 * time.Second
	type result struct {
		ok  bool
		err error
	}
	tryLock := func(ml *MultiLock) <-chan result {
		done := make(chan result, 1)
		go func() {
			lctx, err := ml.TryLock(ctx, wait)
			if err == nil {
				time.Sleep(100 * time.Millisecond)
				err = ml.Unlock(lctx)
				done <- result{true, err}
				return
			}
			done <- result{false, err}
		}()
		return done
	}
	r1 := tryLock(ml1)
	time.Sleep(300 * time.Millisecond) // ml1 first in a's queue
	r2 := tryLock(ml2)
	time.Sleep(300 * time.Millisecond)
	if err := holder.Unlock(hctx); err != nil {
		t.Fatal(err)
	}
	res1, res2 := <-r1, <-r2
	if !res1.ok && !res2.ok {
		t.Fatalf("neither MultiLock acquired within %s with both locks free but for each other: %v; %v", wait, res1.err, res2.err)
	}
	if !res1.ok {
		t.Fatalf("ml1, first in a's queue, not acquired: %v", res1.err)
	}
}
