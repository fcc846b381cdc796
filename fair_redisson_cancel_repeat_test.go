package scriptlock

import (
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A waiter leaving Redisson's fair queue lowers the score of every waiter
// behind it by its waitTime (as RFairLock's acquireFailed does) and, the
// lock free, tells the new head, judging it stale by its score before the
// lowering: a live waiter that only the lowering made look stale is told,
// not evicted. The leave made again (its reply lost, or its SPUBLISH
// refused) finds its waiter gone and tells the head again: it must not
// evict that waiter as stale now that its score is lowered, sending a live
// waiter out of the queue and telling the one behind it instead.
func TestFairRedissonCancelRepeatKeepsLoweredHead(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	f := mustFair(t, c, "cancel-repeat", WithRedissonFairQueue(0))
	m := &f.m
	const leaving, next, last = "88888888-0000-8000-8000-000000000000:a", "88888888-0000-8000-8000-000000000000:b", "88888888-0000-8000-8000-000000000000:c"
	now := time.Now()
	ms := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).UnixMilli(), 10) }
	const waitTime = 5 * time.Second
	doAll(t, node,
		[]string{"RPUSH", f.queue, leaving, next, last},
		// next's place ends 2 s from now: lowered by the leaving waiter's
		// waitTime, its score has passed, but it still waits.
		[]string{"ZADD", f.timeouts, ms(-time.Second), leaving, ms(2 * time.Second), next, ms(time.Minute), last},
	)
	log := listen(t, node, m.channel+":"+next, m.channel+":"+last)
	cancel := func(repeat bool) (bool, error) {
		return generated.FairRedissonCancel(ctx, c.rc, m.key, f.queue, f.timeouts, m.channel, leaving, waitTime, "publish", now, repeat)
	}
	if queued, err := cancel(false); err != nil || !queued {
		t.Fatalf("leave: %v, %v; want queued", queued, err)
	}
	if got, want := log.next(t, 2*time.Second), m.channel+":"+next+" 0"; got != want {
		t.Fatalf("leave published %q, want %q", got, want)
	}
	if queued, err := cancel(true); err != nil || queued {
		t.Fatalf("repeated leave: %v, %v; want not queued", queued, err)
	}
	if got, want := log.next(t, 2*time.Second), m.channel+":"+next+" 0"; got != want {
		t.Fatalf("repeated leave published %q, want %q: the live waiter the leave lowered evicted as stale", got, want)
	}
	if head, err := node.Do(t, "LINDEX", f.queue, "0").ToString(); err != nil || head != next {
		t.Fatalf("queue head after the repeat: %q, %v; want %q still queued", head, err, next)
	}
}
