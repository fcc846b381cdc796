package failover_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestSentinelSemaphoreGuardWindow is TestSentinelGuardWindow for the
// semaphores: a semaphore of one permit, replication held back in the
// proxies while callers acquire, then the primary killed and the held bytes
// discarded. Guard off: the promoted replica never saw the permit taken and
// hands it to a second caller while the first still holds it, two callers
// on one permit. Guard on: both semaphores' acquisitions fail with
// ErrNotReplicated, so nobody runs on a permit the failover hands out again.
func TestSentinelSemaphoreGuardWindow(t *testing.T) {
	t.Parallel()
	s := redistest.Sentinel(t, redistest.WithProxiedReplication())
	prefix := redistest.Prefix(t)
	guardedClient := sentinelLocks(t, s, prefix, guardOpt(true))
	firstClient := sentinelLocks(t, s, prefix, guardOpt(false))
	secondClient := sentinelLocks(t, s, prefix, guardOpt(false))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	sem := func(c *scriptlock.Client, name string) *scriptlock.Semaphore {
		t.Helper()
		h, err := c.Semaphore(name)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	// The guarded acquisitions use semaphores of their own, so that the two
	// cases cannot interfere.
	guarded := sem(guardedClient, "guarded")
	first, second := sem(firstClient, "window"), sem(secondClient, "window")
	// The second caller's client first follows the failover on a semaphore
	// of its own.
	probe := sem(secondClient, "probe")
	permits, err := guardedClient.PermitSemaphore("guarded-permits")
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []*scriptlock.Semaphore{guarded, first, probe} {
		if _, err := h.TrySetPermits(ctx, 1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := permits.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	// A healthy deployment: the guard passes.
	if err := guarded.Acquire(ctx, 1); err != nil {
		t.Fatalf("guarded Semaphore.Acquire, replicas healthy: %v", err)
	}
	if err := guarded.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	id, err := permits.Acquire(ctx, time.Minute)
	if err != nil {
		t.Fatalf("guarded PermitSemaphore.Acquire, replicas healthy: %v", err)
	}
	if err := permits.Release(ctx, id); err != nil {
		t.Fatal(err)
	}
	// Every count must reach both replicas before replication is held back.
	for _, r := range s.Data[1:] {
		for _, key := range []string{guarded.Key(), first.Key(), probe.Key(), permits.Key()} {
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
				if v, err := r.Do(t, "GET", key).ToString(); err == nil && v == "1" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("replica %s does not have 1 permit under %s 5 s after it was set", r.Addr, key)
				}
			}
		}
	}

	for _, p := range s.ReplicationProxies {
		p.Freeze()
	}
	gerr := guarded.Acquire(ctx, 1)
	_, perr := permits.Acquire(ctx, time.Minute)
	if err := first.Acquire(ctx, 1); err != nil {
		for _, p := range s.ReplicationProxies {
			p.Thaw()
		}
		t.Fatalf("unguarded Acquire with replication held back: %v", err)
	}
	old := s.Data[0]
	old.Kill()
	for _, p := range s.ReplicationProxies {
		p.DropAll() // the replicas never see the permits taken
		p.Thaw()
	}
	primary, took := s.WaitFailover(t, old, 1)
	t.Logf("kill -9 of %s: %s promoted in %v", old.Addr, primary.Addr, took)
	if !errors.Is(gerr, scriptlock.ErrNotReplicated) {
		t.Errorf("guarded Semaphore.Acquire with replication held back: %v, want ErrNotReplicated", gerr)
	}
	if !errors.Is(perr, scriptlock.ErrNotReplicated) {
		t.Errorf("guarded PermitSemaphore.Acquire with replication held back: %v, want ErrNotReplicated", perr)
	}

	// The second caller's client reaches the new primary.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		err := probe.TryAcquire(ctx, 1, time.Until(deadline))
		if err == nil {
			_ = probe.Release(ctx, 1)
			break
		}
		if errors.Is(err, scriptlock.ErrNotAcquired) || time.Now().After(deadline) {
			t.Fatalf("second caller's client does not reach the new primary: %v", err)
		}
	}
	// Guard off: the promoted replica hands the first caller's permit to a
	// second one.
	if err := second.TryAcquire(ctx, 1, 10*time.Second); err != nil {
		t.Fatalf("guard off: the second caller did not get the permit the unreplicated acquisition took (window not shown): %v", err)
	}
	t.Log("guard off: a second caller took the one permit while the first held it")
	// Guard on: nothing was granted, and the new primary has every permit.
	if v, err := primary.Do(t, "GET", guarded.Key()).ToString(); err != nil || v != "1" {
		t.Errorf("guarded semaphore on the new primary: %q, %v; want 1 permit", v, err)
	}
	if st, err := permits.State(ctx); err != nil || st.Available != 1 || st.Held != 0 {
		t.Errorf("guarded permit semaphore on the new primary: %+v, %v; want 1 available, none held", st, err)
	}
}
