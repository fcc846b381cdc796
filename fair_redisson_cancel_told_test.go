package scriptlock

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
)

// TestFairRedissonCancelChecksWhomItTells: a leave of Redisson's fair queue
// beside a free lock tells the first waiter its eviction keeps, and checks
// that waiter's channel before it writes. A waiter behind it without a
// score is given one by the lowering (less waitTime), judged stale and
// evicted; the check took it for the one told, so a user allowed its
// channel but not the next one's took the waiter out, lowered the scores
// and evicted, then failed at the publish with Redis's bare refusal, the
// head not told. The leave is refused (NO_PUBLISH) with nothing changed.
func TestFairRedissonCancelChecksWhomItTells(t *testing.T) {
	t.Parallel()
	n, _, app := newNoChannelClients(t)
	ctx := testCtx(t, 30*time.Second)
	rf := mustFair(t, app, "rf", WithRedissonFairQueue(time.Minute))
	const (
		self     = "11111111-0000-4000-8000-000000000000:1"
		unscored = "22222222-0000-4000-8000-000000000000:1"
		next     = "33333333-0000-4000-8000-000000000000:1"
	)
	later := strconv.FormatInt(time.Now().Add(time.Minute).UnixMilli(), 10)
	doAll(t, n,
		[]string{"ACL", "SETUSER", "app", "&" + rf.m.channel + ":" + unscored},
		[]string{"RPUSH", rf.queue, self, unscored, next},
		[]string{"ZADD", rf.timeouts, later, self, later, next},
	)
	before := keysState(t, n)
	_, err := generated.FairRedissonCancel(ctx, app.rc, rf.m.key, rf.queue, rf.timeouts, rf.m.channel, self, time.Minute, "publish", time.Now(), false)
	if !errors.Is(err, generated.ErrNoPublish) {
		t.Errorf("a leave that tells a waiter whose channel the user may not publish to: %v, want generated.ErrNoPublish", err)
	}
	if diff := sameKeys(before, keysState(t, n)); len(diff) > 0 {
		t.Errorf("leave refused (%v), yet it wrote: %v", err, diff)
	}
}
