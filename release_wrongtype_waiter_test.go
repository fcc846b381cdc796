package scriptlock

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestMutexReleaseLastWrongTypeKeepsWaiter: a last release that finds the
// lock's name taken by a key of another type (a LeanMutex's string, its
// Mutex's hash deleted elsewhere) fails with WRONGTYPE and changes nothing:
// the first Go waiter, which a contended release takes out of the set before
// it deletes the owner's field, stays registered with its score, and the
// set keeps its expiry. A Lua error does not take back the script's earlier
// writes, so a waiter taken out and not put back would be neither woken nor
// registered.
func TestMutexReleaseLastWrongTypeKeepsWaiter(t *testing.T) {
	t.Parallel()
	n := redistest.Server(t)
	rc := n.Client(t)
	c := newTestClient(t, rc, sharedPrefix(t))
	m := mustMutex(t, c, "wrongtype-release")
	ctx := testCtx(t, 20*time.Second)
	const (
		owner  = "99999999-0000-8000-8000-000000000000:1"
		waiter = "bbbbbbbb-0000-8000-8000-000000000000:1"
		setTTL = 600000
	)
	for _, cmd := range [][]string{
		{"SET", m.key, "cccccccc-0000-8000-8000-000000000000:1"},
		{"ZADD", m.waiters, "1000", waiter},
		{"PEXPIRE", m.waiters, "600000"},
	} {
		if err := n.Do(t, cmd...).Error(); err != nil {
			t.Fatal(err)
		}
	}
	res, held, err := generated.MutexReleaseLast(ctx, rc, m.key, m.channel, m.waiters, m.wake, owner, "publish")
	if err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
		t.Fatalf("release of a name another type holds: %d %v %v, want WRONGTYPE", res, held, err)
	}
	if s, err := n.Do(t, "ZSCORE", m.waiters, waiter).AsFloat64(); err != nil || s != 1000 {
		t.Fatalf("the waiter after a release that failed with WRONGTYPE: score %v (%v), want it registered at 1000", s, err)
	}
	if pttl, _ := n.Do(t, "PTTL", m.waiters).AsInt64(); pttl <= setTTL-10000 || pttl > setTTL {
		t.Fatalf("the waiter set's PTTL is %d ms after a release that failed, want about %d", pttl, setTTL)
	}
	if v, _ := n.Do(t, "GET", m.key).ToString(); v != "cccccccc-0000-8000-8000-000000000000:1" {
		t.Fatalf("the other type's key is %q after the release, want it unchanged", v)
	}
}
