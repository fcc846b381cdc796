package scriptlock

import (
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestMutexReleaseLastPutBackDueSetExpires: a contended release that
// changes nothing (here by an owner that does not hold the lock) puts back
// the waiter it took out with the set's expiry. A set due within the
// millisecond (PTTL 0) that the pop emptied was made again without any
// expiry: a waiter set that never went away, where it was about to expire.
// Each round sets the expiry 1 ms ahead, waits on the server for its next
// millisecond (a script that reads TIME until it moves) and releases: the
// release reads PTTL 0 in (nearly) every round.
func TestMutexReleaseLastPutBackDueSetExpires(t *testing.T) {
	t.Parallel()
	n := redistest.Server(t)
	rc := n.Client(t)
	c := newTestClient(t, rc, sharedPrefix(t))
	m := mustMutex(t, c, "putback-due")
	ctx := testCtx(t, 60*time.Second)
	const (
		owner  = "99999999-0000-8000-8000-000000000000:1"
		waiter = "bbbbbbbb-0000-8000-8000-000000000000:1"
	)
	if _, _, err := generated.MutexReleaseLast(ctx, rc, m.key, m.channel, m.waiters, m.wake, owner, "publish"); err != nil {
		t.Fatal(err) // loads the script for the EVALSHA below
	}
	release, err := generated.MutexReleaseLastCommand(rc, m.key, m.channel, m.waiters, m.wake, owner, "publish")
	if err != nil {
		t.Fatal(err)
	}
	release = release.Pin()
	for i := range 50 {
		replies := rc.DoMulti(ctx,
			rc.B().Zadd().Key(m.waiters).ScoreMember().ScoreMember(1000, waiter).Build(),
			rc.B().Pexpire().Key(m.waiters).Milliseconds(1).Build(),
			rc.B().Eval().Script(nextMillisecond).Numkeys(0).Build(),
			release,
		)
		for _, r := range replies[:3] {
			if err := r.Error(); err != nil {
				t.Fatal(err)
			}
		}
		if err := replies[3].Error(); err != nil && !rueidis.IsRedisNil(err) {
			t.Fatalf("release by an owner that does not hold: %v", err)
		}
		if pttl, err := n.Do(t, "PTTL", m.waiters).AsInt64(); err != nil || pttl == -1 {
			t.Fatalf("round %d: the waiter set has no expiry (PTTL %d, %v) after a release that changed nothing put its waiter back: it was due within 1 ms", i, pttl, err)
		}
		if err := n.Do(t, "DEL", m.waiters).Error(); err != nil {
			t.Fatal(err)
		}
	}
}

// nextMillisecond returns once the server's clock has moved to its next
// millisecond.
const nextMillisecond = `local t = redis.call('time')
local s, ms = t[1], math.floor(t[2] / 1000)
repeat
  t = redis.call('time')
until t[1] ~= s or math.floor(t[2] / 1000) ~= ms
return 1`
