package scriptlock

import (
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A FairMutex release on Redisson's queue made again (its reply lost, or
// its SPUBLISH refused) tells the queue's head again while the lock is
// free. A head whose score has passed since the first attempt is a waiter
// that stopped waiting (Redisson's threadWaitTime): the repeat must drop it
// first, as every release does, and tell the live waiter behind it, or that
// waiter sleeps until it asks again beside a free lock.
func TestFairRedissonReleaseRepeatDropsStaleHead(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	f := mustFair(t, c, "release-repeat", WithRedissonFairQueue(0))
	m := &f.m
	const field = "55555555-0000-8000-8000-000000000000:holder"
	const stale, live = "55555555-0000-8000-8000-000000000000:stale", "55555555-0000-8000-8000-000000000000:live"
	now := time.Now()
	ms := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).UnixMilli(), 10) }
	doAll(t, node,
		[]string{"HSET", m.key, field, "1"}, []string{"PEXPIRE", m.key, "30000"},
		[]string{"RPUSH", f.queue, stale, live},
		[]string{"ZADD", f.timeouts, ms(time.Second), stale, ms(2 * time.Second), live},
	)
	log := listen(t, node, m.channel+":"+stale, m.channel+":"+live)
	latch := m.latch + ":repeat"
	release := func(now time.Time) (int64, error) {
		res, err := generated.FairRedissonRelease(ctx, c.rc, m.key, f.queue, f.timeouts, m.channel, latch, m.fence, time.Minute, field, now, "publish", 10*time.Second, 0, false, 0)
		return res.Status, err
	}
	if st, err := release(now); err != nil || st != 2 {
		t.Fatalf("release: %d, %v; want 2 (released)", st, err)
	}
	if got, want := log.next(t, 2*time.Second), m.channel+":"+stale+" 0"; got != want {
		t.Fatalf("release published %q, want %q", got, want)
	}
	// The head stopped waiting: its score passed before the repeat.
	if st, err := release(now.Add(1500 * time.Millisecond)); err != nil || st != 2 {
		t.Fatalf("repeated release: %d, %v; want 2 (released, as the first attempt answered)", st, err)
	}
	if got, want := log.next(t, 2*time.Second), m.channel+":"+live+" 0"; got != want {
		t.Fatalf("repeated release published %q, want %q: the stale head told again, the live waiter behind it not", got, want)
	}
	if n, err := node.Do(t, "LLEN", f.queue).AsInt64(); err != nil || n != 1 {
		t.Fatalf("queue length after the repeat: %d, %v; want 1 (the stale head dropped)", n, err)
	}
}
