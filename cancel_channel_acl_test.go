package scriptlock

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
)

// TestWaitCancelChannelRefused: a waiter that gives up passes on a wake, or
// tells the next waiter or the readers it held back, with a publish; by an
// ACL user without the channel (Redis 7 gives a new user none) the leave
// took the waiter out (and, on Redisson's fair queue, lowered the scores
// behind it), then failed at its publish: the next one was not told. Each
// leave that would publish is refused before it writes (NO_PUBLISH): every
// key keeps its value and life.
func TestWaitCancelChannelRefused(t *testing.T) {
	t.Parallel()
	n, _, app := newNoChannelClients(t)
	ctx := testCtx(t, 30*time.Second)
	m := mustMutex(t, app, "m")
	rw := mustRW(t, app, "rw")
	f := mustFair(t, app, "f")
	fh := mustFair(t, app, "fh")
	rf := mustFair(t, app, "rf", WithRedissonFairQueue(time.Minute))
	do := func(args ...string) {
		t.Helper()
		if err := n.Do(t, args...).Error(); err != nil {
			t.Fatal(err)
		}
	}
	later := strconv.FormatInt(time.Now().Add(time.Minute).UnixMilli(), 10)
	const (
		self  = "11111111-0000-4000-8000-000000000000:1"
		other = "22222222-0000-4000-8000-000000000000:1"
	)
	for _, k := range []struct {
		name  string
		setup func()
		leave func() error
	}{
		// A woken waiter gives up beside a free lock: the wake goes on to
		// the next registered waiter.
		{"Mutex", func() {
			do("ZADD", m.waiters, "1000", other)
		}, func() error {
			_, err := generated.MutexWaitCancel(ctx, app.rc, m.key, m.waiters, m.wake, m.latch+":x:1", self, "publish", time.Minute)
			return err
		}},
		// The last writer waiting leaves a free lock: the readers enter.
		{"RWMutex", func() {
			do("ZADD", rw.writers, later, self+":write")
		}, func() error {
			_, err := generated.RwCancel(ctx, app.rc, rw.key, rw.writers, rw.channel, self+":write", "publish", false, 0)
			return err
		}},
		// The head leaves a free lock: the next live waiter is told.
		{"FairMutex, free", func() {
			do("RPUSH", f.queue, self, other)
			do("ZADD", f.timeouts, later, self, later, other)
		}, func() error {
			_, err := generated.FairCancel(ctx, app.rc, f.m.key, f.queue, f.timeouts, f.wake, self, "publish", false)
			return err
		}},
		// The head leaves a held lock: the next waiter is told to learn the
		// holder's lease.
		{"FairMutex, held", func() {
			do("HSET", fh.m.key, "33333333-0000-4000-8000-000000000000:1", "1")
			do("PEXPIRE", fh.m.key, "60000")
			do("RPUSH", fh.queue, self, other)
			do("ZADD", fh.timeouts, later, self, later, other)
		}, func() error {
			_, err := generated.FairCancel(ctx, app.rc, fh.m.key, fh.queue, fh.timeouts, fh.wake, self, "publish", false)
			return err
		}},
		// Redisson's queue: the scores behind the waiter are lowered, and
		// the new head of a free lock is told.
		{"FairMutex (Redisson's queue)", func() {
			do("RPUSH", rf.queue, self, other)
			do("ZADD", rf.timeouts, later, self, later, other)
		}, func() error {
			_, err := generated.FairRedissonCancel(ctx, app.rc, rf.m.key, rf.queue, rf.timeouts, rf.m.channel, self, time.Minute, "publish", time.Now(), false)
			return err
		}},
	} {
		k.setup()
		before := keysState(t, n)
		err := k.leave()
		if !errors.Is(err, generated.ErrNoPublish) {
			t.Errorf("%s: a leave by a user without the channels: %v, want generated.ErrNoPublish", k.name, err)
		}
		if diff := sameKeys(before, keysState(t, n)); len(diff) > 0 {
			t.Errorf("%s: leave refused (%v), yet it wrote: %v", k.name, err, diff)
		}
	}
}
