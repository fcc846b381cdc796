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
// a cache, taken again in the background once guardRefresh old. A replica
// that attaches after the count is not waited for until the next count (a
// grant it lacks goes on being made), for no longer than the refresh. One
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
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		info, _ := extra.Do(t, "INFO", "replication").ToString()
		if infoField(info, "master_link_status") == "up" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the third replica not in sync after 10s")
		}
	}
	extra.Pause()
	took := lockUntil("a third replica attached and stopped", func(err error) bool { return errors.Is(err, ErrNotReplicated) })
	t.Logf("a replica attached after the count: grants it lacks for %s", took.Round(time.Millisecond))
	extra.Resume()

	const lease = 3 * time.Second
	held := mustMutex(t, c, "guard-come-and-go-held", WithWatchdog(lease, 250*time.Millisecond))
	lctx, err := held.Lock(ctx)
	for range 5 { // the third replica catching up
		if !errors.Is(err, ErrNotReplicated) {
			break
		}
		lctx, err = held.Lock(ctx)
	}
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
