package scriptlock

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestGuardReplicasComeAndGo: under GuardAllReplicas the replica count is
// a cache, taken again in the background once guardRecheck old (countAge).
// A replica that attaches after the count is not waited for until the next
// count (a grant it lacks goes on being made): measured from a count taken
// the moment before it came online, for about guardRecheck, bounded with
// 1.5 s to spare for the count, the loop's sleep and the failing WAIT's
// timeout on a loaded machine; guardRefresh, as before countAge, fails. One
// that leaves (a restart, a replica taken away) fails every guarded write
// to its primary while the count includes it: a WAIT that fell short has
// the count taken again once it is guardRecheck old, so acquisitions fail
// for about that long, and a hold whose lease is longer is not lost, where
// waiting for the next guardRefresh would end it.
func TestGuardReplicasComeAndGo(t *testing.T) {
	t.Parallel()
	primary, replicas := redistest.ReplicatedN(t, 2)
	extra := redistest.Server(t)
	c := newTestClient(t, primary.Client(t), WithFailoverGuard(true, 100*time.Millisecond), WithGuardReplicas(GuardAllReplicas))
	ctx := testCtx(t, 60*time.Second)
	m := mustMutex(t, c, "guard-come-and-go")
	lockUntil := func(what string, want func(error) bool) time.Duration {
		t.Helper()
		start := time.Now()
		for {
			l, err := m.Lock(ctx)
			if err == nil {
				_ = m.Unlock(l)
			}
			if want(err) {
				return time.Since(start)
			}
			if err != nil && !errors.Is(err, ErrNotReplicated) || time.Since(start) > guardRefresh+5*time.Second {
				t.Fatalf("%s: Lock after %s: %v", what, time.Since(start).Round(time.Millisecond), err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	lockUntil("two replicas", func(err error) bool { return err == nil }) // counted: two

	host := "127.0.0.1"
	if err := extra.Do(t, "REPLICAOF", host, strconv.Itoa(primary.Port)).Error(); err != nil {
		t.Fatal(err)
	}
	waitConnectedReplicas(t, primary, 3)
	for deadline := time.Now().Add(10 * time.Second); replicaState(t, primary, extra.Port) != "online"; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the third replica not online after 10s: %q", replicaState(t, primary, extra.Port))
		}
	}
	extra.Pause()
	// The worst case, which a real count meets at random: the count was
	// taken the moment before the third replica came online, and lists two.
	for c.guard.refreshing.Load() {
		time.Sleep(time.Millisecond)
	}
	c.storeCount(2, nil, nil)
	c.guard.checked.Store(c.countClock())
	took := lockUntil("a third replica attached and stopped", func(err error) bool { return errors.Is(err, ErrNotReplicated) })
	t.Logf("a replica attached after the count: grants it lacks for %s", took.Round(time.Millisecond))
	if bound := guardRecheck + 1500*time.Millisecond; took > bound {
		t.Errorf("a replica attached after the count: acquisitions it did not acknowledge granted for %s, more than %s", took.Round(time.Millisecond), bound)
	}
	extra.Resume()

	const lease = 3 * time.Second
	held := mustMutex(t, c, "guard-come-and-go-held", WithWatchdog(lease, 250*time.Millisecond))
	lctx, err := replicatedLock(func() (context.Context, error) { return held.Lock(ctx) }) // the third replica catching up
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = held.Unlock(lctx) }()
	replicas[0].Kill()
	gone := time.Now()
	waitConnectedReplicas(t, primary, 2)
	took = lockUntil("a replica gone", func(err error) bool { return err == nil })
	t.Logf("a replica gone after the count: ErrNotReplicated for %s", took.Round(time.Millisecond))
	if bound := guardRecheck + 1500*time.Millisecond; took > bound {
		t.Errorf("a replica gone: acquisitions failed with ErrNotReplicated for %s, more than %s", took.Round(time.Millisecond), bound)
	}
	time.Sleep(time.Until(gone.Add(lease + guardLate)))
	if err := context.Cause(lctx); err != nil {
		t.Errorf("a hold with a %s lease ended (%v) after a replica went: its renewals kept waiting for it", lease, err)
	}
}

// TestGuardCountAge: the count is taken again once guardRecheck old for a
// call whose WAIT asks for the count itself (a replica that came online
// since is one it should wait for), and once guardRefresh old for the
// others, the default on a primary without replicas included.
func TestGuardCountAge(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		want, counted int
		age           time.Duration
	}{
		{GuardAllReplicas, 0, guardRecheck},
		{GuardAllReplicas, 2, guardRecheck},
		{1, 0, guardRefresh},
		{1, 2, guardRefresh},
		{2, 0, guardRecheck},
		{2, 1, guardRecheck},
		{2, 2, guardRefresh},
		{2, 3, guardRefresh},
	} {
		if got := countAge(tc.want, tc.counted); got != tc.age {
			t.Errorf("countAge(want %d, counted %d) = %s, want %s", tc.want, tc.counted, got, tc.age)
		}
	}
}
