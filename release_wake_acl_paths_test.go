package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestMutexReleasePathsAgreeOnRefusedLaterWaiter: the two scripts an Unlock
// of a last hold may run (MutexReleaseLast, the usual one, and MutexRelease,
// for a release it cannot vouch for, a shared owner's or a repeat) answer a
// lock whose first waiter is dead and whose next one has a wake channel the
// ACL user may not publish on alike: released, the dead waiter dropped, the
// refused one left registered with its score (to its fallback timer).
// MutexRelease checked the first 8 waiters' channels and refused the whole
// release (NO_PUBLISH: the hold lost, the lock kept until its lease ended)
// where MutexReleaseLast released it. Both still refuse, changing nothing,
// when the first waiter's channel is refused.
func TestMutexReleasePathsAgreeOnRefusedLaterWaiter(t *testing.T) {
	t.Parallel()
	n := redistest.Server(t)
	admin := newTestClient(t, n.Client(t), sharedPrefix(t))
	m := mustMutex(t, admin, "wakeacl-paths")
	const (
		owner = "99999999-0000-4000-8000-000000000000:1"
		dead  = "aaaaaaaa-0000-4000-8000-000000000000"
		other = "bbbbbbbb-0000-4000-8000-000000000000"
	)
	app := publishOnlyOn(t, n, m.channel, m.wake+":"+dead)
	ctx := testCtx(t, 20*time.Second)
	setup := func(waiters ...string) {
		t.Helper()
		seedWaiters(t, n, m, owner, waiters...)
	}
	paths := []struct {
		name    string
		release func() (int64, bool, error)
	}{
		{"MutexReleaseLast", func() (int64, bool, error) {
			return generated.MutexReleaseLast(ctx, app, m.key, m.channel, m.waiters, m.wake, owner, "publish")
		}},
		{"MutexRelease", func() (int64, bool, error) {
			queue, timeouts := fairKeys(m.key, true)
			return generated.MutexRelease(ctx, app, m.key, m.channel, m.latch+":paths", m.waiters, m.wake, m.fence, queue, timeouts, DefaultLease, owner, "publish", time.Minute, false, true, 0, false)
		}},
	}
	for _, p := range paths {
		setup("1000", dead+":2", "2000", other+":1")
		res, held, err := p.release()
		if err != nil || !held || res != 1 {
			t.Errorf("%s: release past a dead waiter to one whose channel is refused: %d %v %v, want 1 (released, nobody woken)", p.name, res, held, err)
		}
		if got, _ := n.Do(t, "EXISTS", m.key).AsInt64(); got != 0 {
			t.Errorf("%s: the lock is still held after its release", p.name)
		}
		if s, err := n.Do(t, "ZSCORE", m.waiters, other+":1").AsFloat64(); err != nil || s != 2000 {
			t.Errorf("%s: the waiter whose channel is refused: score %v %v, want it registered at 2000", p.name, s, err)
		}
		if got, _ := n.Do(t, "ZSCORE", m.waiters, dead+":2").ToString(); got != "" {
			t.Errorf("%s: the dead waiter is still registered (score %s)", p.name, got)
		}

		setup("1000", other+":1", "2000", dead+":2")
		before := keysState(t, n)
		if res, held, err := p.release(); !errors.Is(err, generated.ErrNoPublish) {
			t.Errorf("%s: release whose first waiter's channel is refused: %d %v %v, want generated.ErrNoPublish", p.name, res, held, err)
		}
		if diff := sameKeys(before, keysState(t, n)); len(diff) > 0 {
			t.Errorf("%s: refused release wrote: %v", p.name, diff)
		}
	}
}
