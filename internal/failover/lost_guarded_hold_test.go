package failover_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestSentinelFailoverLostGuardedHold: under the failover guard a Mutex held
// and renewed by the watchdog, and waited on, whose lock the promoted
// replica lacks (here deleted on the replicas: a replica the guard's WAIT
// did not count, a default count of one with two replicas). The renewal on
// the new primary finds no lock: the holder's context ends then, whatever
// WAIT answers there (the new primary's replicas are still reattaching),
// not at its loss deadline a lease later, and the waiter takes the lock.
func TestSentinelFailoverLostGuardedHold(t *testing.T) {
	t.Parallel()
	s := redistest.Sentinel(t)
	prefix := redistest.Prefix(t)
	const lease = 30 * time.Second
	wd := scriptlock.WithWatchdog(lease, time.Second)
	hc := sentinelLocks(t, s, prefix, guardOpt(true), wd)
	wc := sentinelLocks(t, s, prefix, guardOpt(true), wd, longWaiter)
	h, w := mustLock(t, lockKinds[0].make, hc, "m"), mustLock(t, lockKinds[0].make, wc, "m")
	key := h.(interface{ Key() string }).Key()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	held, err := h.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		at  time.Time
		ctx context.Context
		err error
	}
	waited := make(chan got, 1)
	go func() {
		l, err := w.Lock(ctx)
		waited <- got{time.Now(), l, err}
	}()
	old := s.Data[0]
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		chans, err := old.Do(t, "PUBSUB", "CHANNELS", "*"+prefix+"*").AsStrSlice()
		if err == nil && len(chans) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the waiter did not subscribe")
		}
	}
	for _, r := range s.Data[1:] {
		if err := r.Do(t, "CONFIG", "SET", "replica-read-only", "no").Error(); err != nil {
			t.Fatal(err)
		}
		if n, err := r.Do(t, "DEL", key).AsInt64(); err != nil || n != 1 {
			t.Fatalf("DEL %s on replica %s: %d %v", key, r.Addr, n, err)
		}
	}
	time.Sleep(500 * time.Millisecond)
	old.Kill()
	primary, took := s.WaitFailover(t, old, 1)
	promoted := time.Now()
	t.Logf("%s promoted in %v", primary.Addr, took)
	const bound = 10 * time.Second
	select {
	case <-held.Done():
		if cause := context.Cause(held); !errors.Is(cause, scriptlock.ErrLockLost) {
			t.Errorf("holder's context ended with %v, want ErrLockLost", cause)
		}
		t.Logf("holder's context ended %v after the promotion", time.Since(promoted).Round(time.Millisecond))
	case <-time.After(bound):
		t.Errorf("holder's context still alive %v after the promotion of a replica without its lock", bound)
	}
	select {
	case g := <-waited:
		if g.err != nil {
			t.Fatalf("waiter: %v", g.err)
		}
		t.Logf("waiter took the lock %v after the promotion", g.at.Sub(promoted).Round(time.Millisecond))
		if err := w.Unlock(g.ctx); err != nil {
			t.Errorf("waiter's Unlock: %v", err)
		}
	case <-time.After(bound):
		t.Errorf("waiter still waiting %v after the promotion of a replica without the lock", bound)
		g := <-waited
		t.Logf("waiter took the lock %v after the promotion (%v)", g.at.Sub(promoted).Round(time.Millisecond), g.err)
	}
}
