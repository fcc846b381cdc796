package scriptlock

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
)

// TestFairRedissonReleaseRefusedTwiceQueuedHead: Redisson's queue holds one
// waiter twice, both entries past their score (it queued again after its
// score was removed by hand, as FairRedissonAcquire allows). The release's
// eviction drops the first entry with the score, and keeps the second, whose
// score is gone: that waiter is the one told. The check before the writes
// took its second entry for stale too, checked nobody's channel, and the
// refused publish came after the lock was deleted.
func TestFairRedissonReleaseRefusedTwiceQueuedHead(t *testing.T) {
	t.Parallel()
	n, _, app := newNoChannelClients(t)
	ctx := testCtx(t, 30*time.Second)
	past := strconv.FormatInt(time.Now().Add(-time.Minute).UnixMilli(), 10)
	rf := mustFair(t, app, "rf", WithRedissonFairQueue(time.Minute))
	held, err := rf.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const w = "44444444-0000-4000-8000-000000000000:1"
	doAll(t, n, []string{"RPUSH", rf.queue, w, w}, []string{"ZADD", rf.timeouts, past, w})
	before := keysState(t, n)
	err = rf.Unlock(held)
	if !errors.Is(err, generated.ErrNoPublish) {
		t.Errorf("Unlock by a user without the channels: %v, want generated.ErrNoPublish", err)
	}
	if diff := sameKeys(before, keysState(t, n)); len(diff) > 0 {
		t.Errorf("Unlock refused (%v), yet it wrote: %v", err, diff)
	}
}

// TestFairForceUnlockRefusedTwiceQueuedRedissonHead: as above, for
// ForceUnlock, which tells the head of both queues: its check before the
// writes took the second entry of a waiter queued twice in Redisson's queue
// for stale, and the refused publish came after the lock was deleted.
func TestFairForceUnlockRefusedTwiceQueuedRedissonHead(t *testing.T) {
	t.Parallel()
	n, _, app := newNoChannelClients(t)
	ctx := testCtx(t, 30*time.Second)
	past := strconv.FormatInt(time.Now().Add(-time.Minute).UnixMilli(), 10)
	for _, opts := range [][]LockOption{nil, {WithRedissonFairQueue(time.Minute)}} {
		f := mustFair(t, app, "f"+strconv.Itoa(len(opts)), opts...)
		if _, err := f.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		var rq, rt [1]string
		redissonNames(rq[:], f.m.key, "redisson_lock_queue")
		redissonNames(rt[:], f.m.key, "redisson_lock_timeout")
		const w = "44444444-0000-4000-8000-000000000000:1"
		doAll(t, n, []string{"RPUSH", rq[0], w, w}, []string{"ZADD", rt[0], past, w})
		before := keysState(t, n)
		ok, err := f.ForceUnlock(ctx)
		if ok || !errors.Is(err, generated.ErrNoPublish) {
			t.Errorf("%d options: ForceUnlock by a user without the channels: %v %v, want false, generated.ErrNoPublish", len(opts), ok, err)
		}
		after := keysState(t, n)
		for key := range after {
			if _, was := before[key]; !was && strings.HasPrefix(key, "redisson_unlock_latch:") {
				delete(after, key) // the call's reserved record
			}
		}
		if diff := sameKeys(before, after); len(diff) > 0 {
			t.Errorf("%d options: ForceUnlock refused (%v), yet it wrote: %v", len(opts), err, diff)
		}
	}
}
