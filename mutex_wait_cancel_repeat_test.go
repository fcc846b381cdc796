package scriptlock

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A Mutex waiter that gave up after it was woken passes the wake on to the
// next Go waiter while the lock is free (MutexWaitCancel). Made again after
// its reply was lost, the leave finds the lock still free (the waiter it
// woke has not taken it yet) and must not wake, and take out of the waiter
// set, a second waiter for the same hand-off: it answers as its first
// attempt did and publishes nothing.
func TestMutexWaitCancelRepeatAfterLostReplyWakesNoSecondWaiter(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	m := mustMutex(t, c, "cancel-repeat")
	ctx := testCtx(t, 10*time.Second)
	const client = "33333333-0000-8000-8000-000000000000"
	first, second := client+":w1", client+":w2"
	if err := node.Do(t, "ZADD", m.waiters, "1", first, "2", second).Error(); err != nil {
		t.Fatal(err)
	}
	log := listen(t, node, m.wake+":"+client)
	leave := func() (bool, error) {
		return generated.MutexWaitCancel(ctx, c.rc, m.key, m.waiters, m.wake, m.latch+":leave", "gone:1", "publish", time.Minute)
	}
	if passed, err := leave(); err != nil || !passed {
		t.Fatalf("leave: %v, %v; want the wake passed on", passed, err)
	}
	if got, want := log.next(t, 2*time.Second), m.wake+":"+client+" 1:"+first; got != want {
		t.Fatalf("leave published %q, want %q", got, want)
	}
	// The first waiter, woken, has not taken the lock yet.
	if passed, err := leave(); err != nil || !passed {
		t.Fatalf("repeated leave: %v, %v; want the wake passed on, as the first attempt answered", passed, err)
	}
	log.quiet(t, 300*time.Millisecond)
	if n, err := node.Do(t, "ZSCORE", m.waiters, second).AsFloat64(); err != nil || n != 2 {
		t.Fatalf("the second waiter's place: %v, %v; want it still registered: the repeat woke it as well as the first", n, err)
	}
}

// A waiter that gave up while still registered (no wake named it) takes
// itself out and passes nothing on: the lock's hand-off, if any, is another
// waiter's. Made again after its reply was lost, the leave finds its field
// gone, as a woken waiter's would be, and the lock free while the waiter a
// release woke has not taken it yet: it must not read that as a wake of its
// own to pass on, and wake the next waiter for a hand-off not its own.
func TestMutexWaitCancelRepeatOfUnwokenLeaveWakesNobody(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	m := mustMutex(t, c, "cancel-repeat-unwoken")
	ctx := testCtx(t, 10*time.Second)
	const client = "33333333-0000-8000-8000-000000000000"
	leaving, next := client+":w1", client+":w2"
	// A release freed the lock and woke a waiter (out of the set by then);
	// leaving and next still wait.
	if err := node.Do(t, "ZADD", m.waiters, "1", leaving, "2", next).Error(); err != nil {
		t.Fatal(err)
	}
	log := listen(t, node, m.wake+":"+client)
	leave := func() (bool, error) {
		return generated.MutexWaitCancel(ctx, c.rc, m.key, m.waiters, m.wake, m.latch+":leave", leaving, "publish", time.Minute)
	}
	for _, what := range []string{"leave", "repeated leave"} {
		if passed, err := leave(); err != nil || passed {
			t.Fatalf("%s: %v, %v; want nothing passed on (the waiter was not woken)", what, passed, err)
		}
		log.quiet(t, 300*time.Millisecond)
		if n, err := node.Do(t, "ZSCORE", m.waiters, next).AsFloat64(); err != nil || n != 2 {
			t.Fatalf("after the %s, the next waiter's place: %v, %v; want it still registered", what, n, err)
		}
	}
}

// A woken waiter that gives up and finds nothing to pass on (the lock held
// again, by the waiter it was woken beside or anyone else; or no waiter
// left in the set) passes nothing on. Made again after its reply was lost,
// the leave may find the lock free once more (its holder released it and
// woke the next waiter, which has not taken it yet) or a waiter registered
// since: it must answer as its first attempt did and wake nobody, or that
// waiter is taken out of the set for a hand-off that is not its own.
func TestMutexWaitCancelRepeatOfLeaveThatPassedNothingWakesNobody(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	const client = "33333333-0000-8000-8000-000000000000"
	for _, tc := range []struct {
		name string
		// before sets the lock and waiters the first attempt finds; between
		// changes them before the repeat.
		before, between [][]string
	}{{
		name:    "lock held",
		before:  [][]string{{"HSET", "{key}", "44444444-0000-8000-8000-000000000000:h", "1"}, {"ZADD", "{waiters}", "1", client + ":w1", "2", client + ":w2"}},
		between: [][]string{{"DEL", "{key}"}, {"ZREM", "{waiters}", client + ":w1"}}, // the holder's release woke w1
	}, {
		name:    "nobody waiting",
		between: [][]string{{"ZADD", "{waiters}", "2", client + ":w2"}}, // registered behind a waiter since woken
	}} {
		t.Run(tc.name, func(t *testing.T) {
			m := mustMutex(t, c, "cancel-repeat-nothing-"+strings.ReplaceAll(tc.name, " ", "-"))
			run := func(cmds [][]string) {
				for _, cmd := range cmds {
					args := append([]string(nil), cmd...)
					for i, a := range args {
						args[i] = strings.NewReplacer("{key}", m.key, "{waiters}", m.waiters).Replace(a)
					}
					if err := node.Do(t, args...).Error(); err != nil {
						t.Fatal(err)
					}
				}
			}
			run(tc.before)
			log := listen(t, node, m.wake+":"+client)
			leave := func() (bool, error) {
				return generated.MutexWaitCancel(ctx, c.rc, m.key, m.waiters, m.wake, m.latch+":leave", "gone:1", "publish", time.Minute)
			}
			if passed, err := leave(); err != nil || passed {
				t.Fatalf("leave: %v, %v; want nothing passed on", passed, err)
			}
			run(tc.between)
			if passed, err := leave(); err != nil || passed {
				t.Fatalf("repeated leave: %v, %v; want nothing passed on, as the first attempt answered", passed, err)
			}
			log.quiet(t, 300*time.Millisecond)
			if n, err := node.Do(t, "ZSCORE", m.waiters, client+":w2").AsFloat64(); err != nil || n != 2 {
				t.Fatalf("the waiter's place: %v, %v; want it still registered: the repeat woke it", n, err)
			}
		})
	}
}
