package scriptlock

import (
	"errors"
	"strconv"
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
	do := func(args ...string) {
		t.Helper()
		if err := n.Do(t, args...).Error(); err != nil {
			t.Fatal(err)
		}
	}
	rf := mustFair(t, app, "rf", WithRedissonFairQueue(time.Minute))
	held, err := rf.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const w = "44444444-0000-4000-8000-000000000000:1"
	do("RPUSH", rf.queue, w, w)
	do("ZADD", rf.timeouts, past, w)
	before := keysState(t, n)
	err = rf.Unlock(held)
	if !errors.Is(err, generated.ErrNoPublish) {
		t.Errorf("Unlock by a user without the channels: %v, want generated.ErrNoPublish", err)
	}
	if diff := sameKeys(before, keysState(t, n)); len(diff) > 0 {
		t.Errorf("Unlock refused (%v), yet it wrote: %v", err, diff)
	}
}
