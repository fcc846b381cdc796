package scriptlock

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
)

// TestFairEvictChannelRefused: a FairMutex attempt that finds the lock free
// and a dead head before a live waiter evicts the dead one and tells the new
// head; by an ACL user without the waiters' wake channel it evicted, then
// failed at its publish: the live head was not told it is first. It is
// refused before it writes (NO_PUBLISH): every key keeps its value and life.
func TestFairEvictChannelRefused(t *testing.T) {
	t.Parallel()
	n, _, app := newNoChannelClients(t)
	ctx := testCtx(t, 30*time.Second)
	f := mustFair(t, app, "f")
	past := strconv.FormatInt(time.Now().Add(-time.Minute).UnixMilli(), 10)
	later := strconv.FormatInt(time.Now().Add(time.Minute).UnixMilli(), 10)
	dead, live := "33333333-0000-4000-8000-000000000000:1", "33333333-0000-4000-8000-000000000000:2"
	if err := n.Do(t, "RPUSH", f.queue, dead, live).Error(); err != nil {
		t.Fatal(err)
	}
	if err := n.Do(t, "ZADD", f.timeouts, past, dead, later, live).Error(); err != nil {
		t.Fatal(err)
	}
	before := keysState(t, n)
	_, err := f.TryLock(ctx, 0)
	if !errors.Is(err, generated.ErrNoPublish) {
		t.Errorf("TryLock evicting by a user without the channel: %v, want generated.ErrNoPublish", err)
	}
	if diff := sameKeys(before, keysState(t, n)); len(diff) > 0 {
		t.Errorf("TryLock evicting refused (%v), yet it wrote: %v", err, diff)
	}
}
