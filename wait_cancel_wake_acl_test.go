package scriptlock

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestMutexWaitCancelRefusedLaterWaiter: a woken waiter that gives up beside
// a free lock passes its wake on as a release does, and answers a wake
// channel the ACL user may not publish on as the release paths do: only the
// channels it publishes on are checked, so a later waiter whose channel is
// refused neither stops the wake reaching the live waiter ahead of it nor,
// behind a dead one, the dead one's removal; it stays registered with its
// score, to its fallback timer. The leave listed the first 8 waiters and was
// refused (NO_PUBLISH) when any of their channels was: the live first waiter
// slept until its fallback timer beside a free lock. A leave whose first
// waiter's channel is refused is still refused, changing nothing, and a
// waiter still registered leaves without publishing.
func TestMutexWaitCancelRefusedLaterWaiter(t *testing.T) {
	t.Parallel()
	n := redistest.Server(t)
	admin := newTestClient(t, n.Client(t), sharedPrefix(t))
	m := mustMutex(t, admin, "cancelacl")
	const (
		live    = "aaaaaaaa-0000-4000-8000-000000000000"
		dead    = "cccccccc-0000-4000-8000-000000000000"
		other   = "bbbbbbbb-0000-4000-8000-000000000000"
		leaving = "dddddddd-0000-4000-8000-000000000000:1"
	)
	// The live and the dead clients' wake channels, nothing else.
	app := publishOnlyOn(t, n, m.wake+":"+live, m.wake+":"+dead)
	log := listen(t, n, m.wake+":"+live)
	ctx := testCtx(t, 20*time.Second)
	seq := 0
	setup := func(waiters ...string) {
		t.Helper()
		seedWaiters(t, n, m, "", waiters...)
	}
	cancel := func(field string) (bool, error) {
		seq++
		return generated.MutexWaitCancel(ctx, app, m.key, m.waiters, m.wake, m.latch+":leave:"+strconv.Itoa(seq), field, "publish", time.Minute)
	}
	score := func(field string) string {
		got, _ := n.Do(t, "ZSCORE", m.waiters, field).ToString()
		return got
	}

	// A live waiter first, then one whose channel is refused: the live one
	// is woken and taken out, the refused one kept.
	setup("1000", live+":1", "2000", other+":1")
	if passed, err := cancel(leaving); err != nil || !passed {
		t.Fatalf("leave beside a free lock, a live waiter first and a refused one behind it: %v %v, want the wake passed on", passed, err)
	}
	if got := log.next(t, 5*time.Second); got != m.wake+":"+live+" 1000:"+live+":1" {
		t.Fatalf("message %q, want the live waiter named", got)
	}
	if s := score(live + ":1"); s != "" {
		t.Errorf("the woken waiter is still registered (score %s)", s)
	}
	if s := score(other + ":1"); s != "2000" {
		t.Errorf("the waiter whose channel is refused: score %q, want it registered at 2000", s)
	}

	// A dead waiter first: dropped, the refused one behind it kept, nobody
	// woken.
	setup("1000", dead+":2", "2000", other+":1")
	if passed, err := cancel(leaving); err != nil || passed {
		t.Fatalf("leave past a dead waiter to a refused one: %v %v, want nothing passed on, no error", passed, err)
	}
	if s := score(dead + ":2"); s != "" {
		t.Errorf("the dead waiter is still registered (score %s)", s)
	}
	if s := score(other + ":1"); s != "2000" {
		t.Errorf("the waiter whose channel is refused: score %q, want it registered at 2000", s)
	}
	if pttl, _ := n.Do(t, "PTTL", m.waiters).AsInt64(); pttl <= 590000 {
		t.Errorf("the waiter set's PTTL is %d ms, want about 600000", pttl)
	}
	log.quiet(t, 100*time.Millisecond)

	// The first waiter's channel refused: refused, nothing changed.
	setup("1000", other+":1", "2000", live+":1")
	before := keysState(t, n)
	if passed, err := cancel(leaving); !errors.Is(err, generated.ErrNoPublish) {
		t.Fatalf("leave whose first waiter's channel is refused: %v %v, want generated.ErrNoPublish", passed, err)
	}
	if diff := sameKeys(before, keysState(t, n)); len(diff) > 0 {
		t.Errorf("refused leave wrote: %v", diff)
	}

	// A waiter still registered only leaves.
	setup("1000", other+":1", "2000", leaving)
	if passed, err := cancel(leaving); err != nil || passed {
		t.Fatalf("leave of a registered waiter: %v %v, want it taken out, nothing passed on", passed, err)
	}
	if s := score(leaving); s != "" {
		t.Errorf("the waiter that left is still registered (score %s)", s)
	}
	if s := score(other + ":1"); s != "1000" {
		t.Errorf("the waiter whose channel is refused: score %q, want it registered at 1000", s)
	}
	log.quiet(t, 100*time.Millisecond)
}
