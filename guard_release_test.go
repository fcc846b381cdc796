package scriptlock

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// reentrantKinds are the re-entrant lockers the failover guard covers, built
// on c: a re-entrant release of each sets the lock's expiry.
func reentrantKinds(t *testing.T, c *Client, name string, opts ...LockOption) map[string]Locker {
	return map[string]Locker{
		"Mutex":     mustMutex(t, c, name+"-mutex", opts...),
		"FairMutex": mustFair(t, c, name+"-fair", opts...),
		"RWMutex":   mustRW(t, c, name+"-rw-write", opts...),
		"RLocker":   mustRW(t, c, name+"-rw-read", opts...).RLocker(),
	}
}

// TestGuardReentrantReleaseNotReplicated: with the failover guard on, a
// re-entrant release that leaves the owner holding sets the lock's expiry on
// the primary, whose reply reports the lease it left. With the only replica
// stopped, an Extend the primary alone took (ErrNotReplicated) left a longer
// lease there than any replica has, and a release that moved the loss
// deadline to it would let the lock context outlive the lock a failover
// leaves: the context must end by the deadline of the last replicated
// lease-setting call.
func TestGuardReentrantReleaseNotReplicated(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	const lease = 1500 * time.Millisecond
	rc := primary.Client(t)
	c := newTestClient(t, rc, WithFailoverGuard(true, 100*time.Millisecond))
	ctx := testCtx(t, 30*time.Second)
	// Loaded before: a script's first call is answered NOSCRIPT and sent
	// again as EVAL, and with the replica stopped each of the two WAITs
	// takes the guard's timeout, which the lease has no room for.
	if err := generated.Preload(ctx, rc); err != nil {
		t.Fatal(err)
	}
	ls := reentrantKinds(t, c, "guard-reentrant", WithLease(lease))
	holds := map[string]guardedHold{}
	inner := map[string]context.Context{}
	for k, l := range ls {
		lctx, err := replicatedLock(func() (context.Context, error) { return l.Lock(ctx) })
		if err != nil {
			t.Fatalf("%s: Lock with the replica running: %v", k, err)
		}
		t.Cleanup(func() { _ = l.Unlock(lctx) })
		again, err := replicatedLock(func() (context.Context, error) { return l.Lock(lctx) })
		if err != nil {
			t.Fatalf("%s: re-entry with the replica running: %v", k, err)
		}
		holds[k] = guardedHold{l: l, lctx: lctx, by: lossDeadline(time.Now(), lease)}
		inner[k] = again
	}
	replica.Pause()
	defer replica.Resume()
	for k, h := range holds {
		if err := h.l.(Extender).Extend(ctx, h.lctx, 10*time.Second); !errors.Is(err, ErrNotReplicated) {
			t.Errorf("%s: Extend with the only replica stopped: %v, want ErrNotReplicated", k, err)
		}
	}
	for k, h := range holds {
		if err := h.l.Unlock(inner[k]); err != nil {
			t.Errorf("%s: re-entrant Unlock with the only replica stopped: %v", k, err)
		}
	}
	// Side by side: one check waiting past its deadline must not make the
	// next one find its own deadline passed.
	var wg sync.WaitGroup
	for k, h := range holds {
		wg.Go(func() { checkEndsBy(t, k, h, "a re-entrant release") })
	}
	wg.Wait()
}

// TestGuardReentrantReleaseRenewed: as TestGuardReentrantReleaseNotReplicated,
// with holds the watchdog renews: the renewals the primary alone took set
// a longer lease there than any replica has, which a re-entrant release
// must not move the loss deadline to.
func TestGuardReentrantReleaseRenewed(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	// A lease that outlasts, on a loaded machine, the pause and the sleep
	// below before the Unlocks: a hold whose lease ran out meanwhile is lost,
	// and its Unlock rightly finds it not held.
	const lease, every = 3 * time.Second, 250 * time.Millisecond
	c := newTestClient(t, primary.Client(t), WithFailoverGuard(true, 100*time.Millisecond), WithWatchdog(lease, every))
	ctx := testCtx(t, 30*time.Second)
	holds := map[string]guardedHold{}
	inner := map[string]context.Context{}
	for k, l := range reentrantKinds(t, c, "guard-reentrant-renewed") {
		lctx, err := replicatedLock(func() (context.Context, error) { return l.Lock(ctx) })
		if err != nil {
			t.Fatalf("%s: Lock with the replica running: %v", k, err)
		}
		t.Cleanup(func() { _ = l.Unlock(lctx) })
		again, err := replicatedLock(func() (context.Context, error) { return l.Lock(lctx) })
		if err != nil {
			t.Fatalf("%s: re-entry with the replica running: %v", k, err)
		}
		holds[k] = guardedHold{l: l, lctx: lctx, by: lossDeadline(time.Now(), lease)}
		inner[k] = again
	}
	replica.Pause()
	defer replica.Resume()
	holds = pausedNow(holds, lease) // renewals acknowledged before the pause count
	time.Sleep(2 * every)           // renewals go unacknowledged
	for k, h := range holds {
		if err := h.l.Unlock(inner[k]); err != nil {
			t.Errorf("%s: re-entrant Unlock with the only replica stopped: %v", k, err)
		}
	}
	var wg sync.WaitGroup
	for k, h := range holds {
		wg.Go(func() { checkEndsBy(t, k, h, "a re-entrant release") })
	}
	wg.Wait()
}

// waitCalls is how many WAIT commands n has run.
func waitCalls(t *testing.T, n *redistest.Node) int {
	t.Helper()
	info, err := n.Do(t, "INFO", "commandstats").ToString()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`cmdstat_wait:calls=(\d+)`).FindStringSubmatch(info)
	if m == nil {
		return 0
	}
	calls, _ := strconv.Atoi(m[1])
	return calls
}

// TestGuardReentrantReleaseAcked: a read release that a replica acknowledged
// still moves the loss deadline to the lease its reply reports. The owner
// reads with leases of 1 s, 4 s and 1 s: the release takes the last hold's
// lease key, and before its reply the Client can only prove a lease of 1 s
// left (the longest re-entry's key may be the one taken), so the deadline
// moves there before the call is sent and back to the 4 s lease after it.
// The release sends one WAIT; the owner's last release sends none.
func TestGuardReentrantReleaseAcked(t *testing.T) {
	t.Parallel()
	primary, _ := redistest.Replicated(t)
	rc := primary.Client(t)
	c := newTestClient(t, rc, WithFailoverGuard(true, 500*time.Millisecond))
	ctx := testCtx(t, 30*time.Second)
	// Loaded before: the first call of a script on a node is answered
	// NOSCRIPT and sent again as EVAL, with a WAIT of its own.
	if err := generated.Preload(ctx, rc); err != nil {
		t.Fatal(err)
	}
	rw := mustRW(t, c, "guard-reentrant-acked")
	first, err := rw.RLockWithLease(ctx, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rw.RLockWithLease(first, 4*time.Second); err != nil {
		t.Fatal(err)
	}
	last, err := rw.RLockWithLease(first, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	old := lossDeadline(time.Now(), time.Second)
	waits := waitCalls(t, primary)
	if err := rw.RUnlock(last); err != nil {
		t.Fatal(err)
	}
	if n := waitCalls(t, primary) - waits; n != 1 {
		t.Errorf("a read release that leaves holds sent %d WAIT, want 1", n)
	}
	time.Sleep(time.Until(old.Add(guardLate)))
	if err := context.Cause(first); err != nil {
		t.Fatalf("read hold ended (%v) by the deadline of its 1 s leases although the release, which a replica acknowledged, left its 4 s lease", err)
	}
	for k, l := range map[string]Locker{
		"RUnlock": mustRW(t, c, "guard-reentrant-acked-last").RLocker(),
		"Unlock":  mustMutex(t, c, "guard-reentrant-acked-mutex"),
	} {
		lctx, err := l.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		waits = waitCalls(t, primary)
		if err := l.Unlock(lctx); err != nil {
			t.Fatal(err)
		}
		if n := waitCalls(t, primary) - waits; n != 0 {
			t.Errorf("the owner's last %s sent %d WAIT, want none", k, n)
		}
	}
}
