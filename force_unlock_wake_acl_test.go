package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestMutexForceUnlockRefusedLaterWaiter: a ForceUnlock of a lock whose
// first waiter is dead and whose next one has a wake channel the ACL user may
// not publish on deletes the lock, as a release of it does: the dead waiter
// dropped, the refused one left registered with its score (to its fallback
// timer). It checked the first 8 waiters' channels and refused the whole
// call (NO_PUBLISH), the lock kept, where an Unlock of the same lock went
// through. It is still refused, the lock kept, when the first waiter's
// channel is refused.
func TestMutexForceUnlockRefusedLaterWaiter(t *testing.T) {
	t.Parallel()
	n := redistest.Server(t)
	prefix := sharedPrefix(t)
	admin := newTestClient(t, n.Client(t), prefix)
	m := mustMutex(t, admin, "wakeacl-force")
	const (
		holder = "99999999-0000-4000-8000-000000000000:1"
		dead   = "aaaaaaaa-0000-4000-8000-000000000000"
		other  = "bbbbbbbb-0000-4000-8000-000000000000"
	)
	app := newTestClient(t, publishOnlyOn(t, n, m.channel, m.wake+":"+dead), prefix)
	am := mustMutex(t, app, "wakeacl-force")
	ctx := testCtx(t, 20*time.Second)
	setup := func(waiters ...string) {
		t.Helper()
		seedWaiters(t, n, m, holder, waiters...)
	}

	setup("1000", dead+":2", "2000", other+":1")
	if ok, err := am.ForceUnlock(ctx); !ok || err != nil {
		t.Errorf("ForceUnlock past a dead waiter to one whose channel is refused: %v %v, want true", ok, err)
	}
	if got, _ := n.Do(t, "EXISTS", m.key).AsInt64(); got != 0 {
		t.Error("the lock is still held after the ForceUnlock")
	}
	if s, err := n.Do(t, "ZSCORE", m.waiters, other+":1").AsFloat64(); err != nil || s != 2000 {
		t.Errorf("the waiter whose channel is refused: score %v %v, want it registered at 2000", s, err)
	}
	if got, _ := n.Do(t, "ZSCORE", m.waiters, dead+":2").ToString(); got != "" {
		t.Errorf("the dead waiter is still registered (score %s)", got)
	}

	setup("1000", other+":1", "2000", dead+":2")
	if ok, err := am.ForceUnlock(ctx); !errors.Is(err, generated.ErrNoPublish) {
		t.Errorf("ForceUnlock whose first waiter's channel is refused: %v %v, want generated.ErrNoPublish", ok, err)
	}
	if got, _ := n.Do(t, "HGET", m.key, holder).ToString(); got != "1" {
		t.Errorf("the lock after a refused ForceUnlock: hold %q, want 1", got)
	}
	if n, _ := n.Do(t, "ZCARD", m.waiters).AsInt64(); n != 2 {
		t.Errorf("%d waiters after a refused ForceUnlock, want 2", n)
	}
}
