package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestMutexReleaseWakeChannelRefused: a contended release takes the first
// waiter out of the set before it checks the wake channel it is about to
// publish on. A release the ACL refuses (the user may publish on the lock's
// channel but not on the waiter's wake channel) must change nothing: the
// lock held, every waiter registered with its score, the set's expiry kept,
// also when the refused waiter was the only one (its pop deleted the set).
// An owner that does not hold the lock is answered "not held", and nothing
// changes either. A later waiter, reached after a dead one, whose channel is
// refused stays registered, the lock released.
func TestMutexReleaseWakeChannelRefused(t *testing.T) {
	t.Parallel()
	n := redistest.Server(t)
	admin := newTestClient(t, n.Client(t), sharedPrefix(t))
	m := mustMutex(t, admin, "wakeacl")
	const (
		owner = "99999999-0000-4000-8000-000000000000:1"
		dead  = "aaaaaaaa-0000-4000-8000-000000000000"
		other = "bbbbbbbb-0000-4000-8000-000000000000"
	)
	// The lock's channel and the dead client's wake channel, nothing else.
	app := publishOnlyOn(t, n, m.channel, m.wake+":"+dead)
	ctx := testCtx(t, 20*time.Second)
	const setTTL = 600000
	setup := func(waiters ...string) {
		t.Helper()
		seedWaiters(t, n, m, owner, waiters...)
	}
	unchanged := func(what string, want map[string]float64) {
		t.Helper()
		if got, _ := n.Do(t, "HGET", m.key, owner).ToString(); got != "1" {
			t.Fatalf("%s: the lock's hold is %q, want 1: the refused release changed it", what, got)
		}
		got, err := n.Do(t, "ZRANGE", m.waiters, "0", "-1", "WITHSCORES").AsZScores()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: waiters %v, want %v", what, got, want)
		}
		for _, z := range got {
			if s, ok := want[z.Member]; !ok || s != z.Score {
				t.Fatalf("%s: waiters %v, want %v", what, got, want)
			}
		}
		pttl, _ := n.Do(t, "PTTL", m.waiters).AsInt64()
		if pttl <= setTTL-10000 || pttl > setTTL {
			t.Fatalf("%s: the waiter set's PTTL is %d ms, want the %d ms it had (less the test's time)", what, pttl, setTTL)
		}
	}
	cases := []struct {
		name    string
		waiters []string
	}{
		{"one waiter", []string{"1000", other + ":1"}},
		{"two waiters", []string{"1000", other + ":1", "2000", dead + ":2"}},
	}
	for _, c := range cases {
		want := map[string]float64{}
		for i := 0; i < len(c.waiters); i += 2 {
			want[c.waiters[i+1]] = map[string]float64{"1000": 1000, "2000": 2000}[c.waiters[i]]
		}
		setup(c.waiters...)
		res, held, err := generated.MutexReleaseLast(ctx, app, m.key, m.channel, m.waiters, m.wake, owner, "publish")
		if !errors.Is(err, generated.ErrNoPublish) {
			t.Fatalf("%s: release refused a wake channel: %d %v %v, want generated.ErrNoPublish", c.name, res, held, err)
		}
		unchanged(c.name+", refused release", want)
		res, held, err = generated.MutexReleaseLast(ctx, app, m.key, m.channel, m.waiters, m.wake, "99999999-0000-4000-8000-000000000000:2", "publish")
		if err != nil || held {
			t.Fatalf("%s: release by an owner that does not hold: %d %v %v, want not held", c.name, res, held, err)
		}
		unchanged(c.name+", release by another owner", want)
	}

	// The dead waiter first (its channel allowed, nobody listens), then one
	// whose channel is refused: released, the second kept with its score.
	setup("1000", dead+":2", "2000", other+":1")
	res, held, err := generated.MutexReleaseLast(ctx, app, m.key, m.channel, m.waiters, m.wake, owner, "publish")
	if err != nil || !held || res != 1 {
		t.Fatalf("release past a dead waiter to a refused one: %d %v %v, want 1 (released, nobody woken)", res, held, err)
	}
	if got, _ := n.Do(t, "EXISTS", m.key).AsInt64(); got != 0 {
		t.Fatal("the lock is still held after its release")
	}
	if s, err := n.Do(t, "ZSCORE", m.waiters, other+":1").AsFloat64(); err != nil || s != 2000 {
		t.Fatalf("the waiter whose channel is refused: score %v %v, want it registered at 2000", s, err)
	}
	if pttl, _ := n.Do(t, "PTTL", m.waiters).AsInt64(); pttl <= setTTL-10000 || pttl > setTTL {
		t.Fatalf("the waiter set's PTTL is %d ms after the waiter was put back, want about %d", pttl, setTTL)
	}
	if got, _ := n.Do(t, "ZSCORE", m.waiters, dead+":2").ToString(); got != "" {
		t.Fatalf("the dead waiter is still registered (score %s)", got)
	}
}
