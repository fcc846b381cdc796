package scriptlock

import (
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestMutexPoliteBehindFlag: a polite caller refused a free lock is told
// whether others wait ahead of it (behindOthers) from the registration's own
// expiry calls, not a count of the set: alone in a new set it is not behind;
// added to a set that was there it is, also when that set's expiry was set
// in the same millisecond (two registrations in one MULTI); re-registered
// while in the set, it is behind only when someone else is in it. Every
// registration leaves the set expiring within the waiter timeout.
func TestMutexPoliteBehindFlag(t *testing.T) {
	t.Parallel()
	n := redistest.Server(t)
	rc := n.Client(t)
	c := newTestClient(t, rc, sharedPrefix(t))
	m := mustMutex(t, c, "behind")
	ctx := testCtx(t, 20*time.Second)
	const (
		a = "aaaaaaaa-0000-8000-8000-000000000000:1"
		b = "bbbbbbbb-0000-8000-8000-000000000000:1"
	)
	ctl := acquireCtl(true, false, DefaultFenceIdle, 30*time.Second, 0)
	attempt := func(field string) rueidis.Completed {
		var opts [2]string
		cmd, err := generated.MutexAcquireCommand(rc, m.key, m.fence, m.waiters, field, acquireOpts(&opts, DefaultLease, ctl)...)
		if err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	try := func(what, field string, wantBehind bool) {
		t.Helper()
		var opts [2]string
		res, err := generated.MutexAcquire(ctx, rc, m.key, m.fence, m.waiters, field, acquireOpts(&opts, DefaultLease, ctl)...)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		checkBehind(t, what, res, wantBehind)
		waiterSetExpiring(t, n, m.waiters, what)
	}
	reset := func() {
		if err := n.Do(t, "DEL", m.waiters).Error(); err != nil {
			t.Fatal(err)
		}
	}
	try("alone, a new set", a, false)
	try("again, alone in the set", a, false)
	try("added behind the first", b, true)
	try("again, with the other in the set", a, true)
	reset()
	// Two registrations in one transaction: the second's expiry equals the
	// first's, so its GT moves nothing.
	replies := rc.DoMulti(ctx, rc.B().Multi().Build(), attempt(a), attempt(b), rc.B().Exec().Build())
	exec, err := replies[3].ToArray()
	if err != nil || len(exec) != 2 {
		t.Fatalf("MULTI: %v %v", exec, err)
	}
	for i, want := range []bool{false, true} {
		res, err := exec[i].AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		checkBehind(t, []string{"first in one ms", "second in the same ms"}[i], res, want)
	}
	waiterSetExpiring(t, n, m.waiters, "after one ms's registrations")
}

func checkBehind(t *testing.T, what string, res int64, wantBehind bool) {
	t.Helper()
	r := acquireResult(res)
	if r.acquired() {
		t.Fatalf("%s: a polite caller took the free lock (%d)", what, res)
	}
	if _, _, behind := r.refusal(); behind != wantBehind {
		t.Fatalf("%s: behind others %v, want %v (reply %d)", what, behind, wantBehind, res)
	}
}

func waiterSetExpiring(t *testing.T, n *redistest.Node, key, what string) {
	t.Helper()
	if pttl, _ := n.Do(t, "PTTL", key).AsInt64(); pttl <= 0 || pttl > 30000 {
		t.Fatalf("%s: the waiter set's PTTL is %d, want within the 30 s waiter timeout", what, pttl)
	}
}
