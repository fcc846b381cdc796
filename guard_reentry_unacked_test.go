package scriptlock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestGuardReentryNotReplicated: with the failover guard on, a re-entry no
// replica acknowledged fails with ErrNotReplicated and is given back, and
// it must leave the owner's hold with the loss deadline of its last
// replicated grant: the primary alone has the lease the re-entry set, and a
// failover promotes a replica with the grant's expiry. The re-entry's reply
// moved the deadline to the lease it set before the Client looked at its
// WAIT, and giving it back re-armed the lock from then on, so the lock
// context outlived the lock a failover leaves.
func TestGuardReentryNotReplicated(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	// Long enough for every kind's grant, the 600 ms below and every kind's
	// refused re-entry (each waits the 100 ms timeout) on a loaded machine:
	// with 2 s, a Mutex's lease ran out before its re-entry was sent.
	const lease = 5 * time.Second
	rc := primary.Client(t)
	c := newTestClient(t, rc, WithFailoverGuard(true, 100*time.Millisecond))
	ctx := testCtx(t, 30*time.Second)
	// Loaded before: a script's first call is answered NOSCRIPT and sent
	// again as EVAL, with a WAIT of its own.
	if err := generated.Preload(ctx, rc); err != nil {
		t.Fatal(err)
	}
	holds := map[string]guardedHold{}
	for k, l := range reentrantKinds(t, c, "guard-reentry-unacked", WithLease(lease)) {
		lctx, err := replicatedLock(func() (context.Context, error) { return l.Lock(ctx) })
		if err != nil {
			t.Fatalf("%s: Lock with the replica running: %v", k, err)
		}
		t.Cleanup(func() { _ = l.Unlock(lctx) })
		holds[k] = guardedHold{l: l, lctx: lctx, by: lossDeadline(time.Now(), lease)}
	}
	replica.Pause()
	defer replica.Resume()
	time.Sleep(600 * time.Millisecond) // the re-entries' leases reach past the grants'
	for k, h := range holds {
		if _, err := h.l.Lock(h.lctx); !errors.Is(err, ErrNotReplicated) {
			t.Errorf("%s: re-entry with the only replica stopped: %v, want ErrNotReplicated", k, err)
		}
	}
	var wg sync.WaitGroup
	for k, h := range holds {
		wg.Go(func() { checkEndsBy(t, k, h, "a re-entry") })
	}
	wg.Wait()
	for k, h := range holds {
		if h.lctx.Err() == nil {
			continue
		}
		if cause := context.Cause(h.lctx); !errors.Is(cause, ErrLockLost) {
			t.Errorf("%s: %v", k, cause)
		}
	}
}

// TestGuardReentryNotReplicatedKeepsLease: a re-entry without a lease that
// no replica acknowledged is given back with ErrNotReplicated, and leaves
// the owner's hold as it was: taken with a lease, it still ends with that
// lease. It was handed to the watchdog all the same, which renewed it once
// the replica was back, so the lock was held and its context live until an
// Unlock the caller, whose re-entry had failed, had no reason to expect.
func TestGuardReentryNotReplicatedKeepsLease(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	const lease = 1500 * time.Millisecond
	rc := primary.Client(t)
	c := newTestClient(t, rc, WithFailoverGuard(true, 100*time.Millisecond), WithWatchdog(lease, 200*time.Millisecond))
	ctx := testCtx(t, 30*time.Second)
	if err := generated.Preload(ctx, rc); err != nil {
		t.Fatal(err)
	}
	holds := map[string]guardedHold{}
	for k, l := range map[string]probeLocker{
		"Mutex":     mustMutex(t, c, "guard-reentry-unacked-lease-mutex"),
		"FairMutex": mustFair(t, c, "guard-reentry-unacked-lease-fair"),
		"RWMutex":   mustRW(t, c, "guard-reentry-unacked-lease-rw-write"),
		"RLocker":   rwRead{mustRW(t, c, "guard-reentry-unacked-lease-rw-read")},
	} {
		lctx, err := replicatedLock(func() (context.Context, error) { return l.LockWithLease(ctx, lease) })
		if err != nil {
			t.Fatalf("%s: Lock with the replica running: %v", k, err)
		}
		t.Cleanup(func() { _ = l.Unlock(lctx) })
		holds[k] = guardedHold{l: l, lctx: lctx, by: lossDeadline(time.Now(), lease)}
	}
	replica.Pause()
	for k, h := range holds {
		if _, err := h.l.Lock(h.lctx); !errors.Is(err, ErrNotReplicated) {
			t.Errorf("%s: re-entry without a lease with the only replica stopped: %v, want ErrNotReplicated", k, err)
		}
	}
	replica.Resume()
	var wg sync.WaitGroup
	for k, h := range holds {
		wg.Go(func() {
			select {
			case <-h.lctx.Done():
				if cause := context.Cause(h.lctx); !errors.Is(cause, ErrLockLost) {
					t.Errorf("%s: lock context ended with %v, want ErrLockLost", k, cause)
				}
			case <-time.After(time.Until(h.by.Add(guardLate))):
				t.Errorf("%s: lock context still live %s past the end of its %s lease: the re-entry that failed with ErrNotReplicated handed the hold to the watchdog", k, guardLate, lease)
			}
		})
	}
	wg.Wait()
}
