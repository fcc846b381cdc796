package scriptlock

import (
	"strconv"
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
// Each round sets the expiry 1 ms ahead and sends the release timed to reach
// the server in its next millisecond, by the server's TIME (a script cannot
// wait for it: from Redis 7.2 on, TIME in a script reads the time the script
// began); TIME read just before and after the release tells the rounds whose
// release read PTTL 0, and enough of them must.
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
		want   = 20  // rounds whose release read PTTL 0
		rounds = 600 // at most
	)
	if _, _, err := generated.MutexReleaseLast(ctx, rc, m.key, m.channel, m.waiters, m.wake, owner, "publish"); err != nil {
		t.Fatal(err) // loads the script for the EVALSHA below
	}
	release, err := generated.MutexReleaseLastCommand(rc, m.key, m.channel, m.waiters, m.wake, owner, "publish")
	if err != nil {
		t.Fatal(err)
	}
	release = release.Pin()
	timeCmd := rc.B().Time().Build().Pin()
	covered := 0
	for i := 0; covered < want; i++ {
		if i == rounds {
			t.Fatalf("only %d of %d releases reached the server in the millisecond the waiter set was due in; want %d", covered, rounds, want)
		}
		sent := time.Now()
		replies := rc.DoMulti(ctx,
			rc.B().Zadd().Key(m.waiters).ScoreMember().ScoreMember(1000, waiter).Build(),
			timeCmd,
			rc.B().Pexpire().Key(m.waiters).Milliseconds(1).Build(),
			timeCmd,
		)
		for _, r := range replies {
			if err := r.Error(); err != nil {
				t.Fatal(err)
			}
		}
		before, after := serverMicros(t, replies[1]), serverMicros(t, replies[3])
		if before/1000 == after/1000 {
			// The set is due in the millisecond after this one: send the
			// release to arrive 300 us into it. TIME was read about half a
			// round trip after the pipeline was sent, and the release
			// reaches the server about half a round trip after it is.
			due := (after/1000 + 1) * 1000
			for until := sent.Add(time.Duration(due+300-after) * time.Microsecond); time.Now().Before(until); {
			}
			replies = rc.DoMulti(ctx, timeCmd, release, timeCmd)
			if err := replies[1].Error(); err != nil && !rueidis.IsRedisNil(err) {
				t.Fatalf("release by an owner that does not hold: %v", err)
			}
			if serverMicros(t, replies[0])/1000 == due/1000 && serverMicros(t, replies[2])/1000 == due/1000 {
				covered++
			}
		}
		if pttl, err := n.Do(t, "PTTL", m.waiters).AsInt64(); err != nil || pttl == -1 {
			t.Fatalf("round %d: the waiter set has no expiry (PTTL %d, %v) after a release that changed nothing put its waiter back: it was due within 1 ms", i, pttl, err)
		}
		if err := n.Do(t, "DEL", m.waiters).Error(); err != nil {
			t.Fatal(err)
		}
	}
}

// serverMicros reads a TIME reply as microseconds.
func serverMicros(t *testing.T, r rueidis.RedisResult) int64 {
	t.Helper()
	v, err := r.AsStrSlice()
	if err != nil || len(v) != 2 {
		t.Fatalf("TIME: %v %v", v, err)
	}
	s, err1 := strconv.ParseInt(v[0], 10, 64)
	us, err2 := strconv.ParseInt(v[1], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("TIME: %v", v)
	}
	return s*1e6 + us
}
