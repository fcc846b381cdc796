package scriptlock

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestClusterPrimaryKilledWhileHeld: the primary serving a lock held under
// the watchdog and the failover guard, and waited on, is killed; its only
// replica, which acknowledged the grant, is promoted and has no replica of
// its own. The hold keeps its context, the watchdog renews the lock on the
// promoted replica once the recount finds it without replicas, new
// acquisitions on that shard succeed again, and the waiter takes the lock
// the holder gives back there, with a higher fencing token.
func TestClusterPrimaryKilledWhileHeld(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithClusterReplicas(1))
	opts := []Option{sharedPrefix(t), WithWatchdog(30*time.Second, 500*time.Millisecond), WithWaiterTimeout(2 * time.Minute), WithFailoverGuard(true, 500*time.Millisecond)}
	h := newTestClient(t, cl.Client(t), opts...)
	w := newTestClient(t, cl.Client(t), opts...)
	ctx := testCtx(t, 120*time.Second)
	holder, waiter := mustMutex(t, h, "killed"), mustMutex(t, w, "killed")
	held, err := holder.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tok1, _ := Fence(held)
	from := cl.NodeFor(t, holder.Key())
	replica := replicaOf(t, cl, from)
	// Another lock on the same shard, for acquisitions after the failover.
	var other *Mutex
	for i := 0; ; i++ {
		m := mustMutex(t, h, fmt.Sprintf("killed-other-%d", i))
		if cl.NodeFor(t, m.Key()) == from {
			other = m
			break
		}
	}
	type woke struct {
		at    time.Time
		token int64
		err   error
	}
	woken := make(chan woke, 1)
	go func() {
		l, err := waiter.Lock(ctx)
		if err != nil {
			woken <- woke{time.Now(), 0, err}
			return
		}
		tok, _ := Fence(l)
		woken <- woke{time.Now(), tok, waiter.Unlock(l)}
	}()
	time.Sleep(time.Second)
	from.Kill()
	killed := time.Now()
	if !eventually(30*time.Second, func() bool { return slices.Contains(cl.Primaries(t), replica) }) {
		t.Fatalf("%s not promoted", replica.Addr)
	}
	t.Logf("%s promoted %v after the kill", replica.Addr, time.Since(killed).Round(time.Millisecond))
	// The watchdog renews the lock on the promoted replica.
	if !eventually(15*time.Second, func() bool {
		pttl, err := replica.Do(t, "PTTL", holder.Key()).AsInt64()
		return err == nil && pttl > 28000
	}) {
		pttl, err := replica.Do(t, "PTTL", holder.Key()).AsInt64()
		t.Fatalf("lock on the promoted %s not renewed: PTTL %d (%v); hold's context: %v", replica.Addr, pttl, err, context.Cause(held))
	}
	if err := held.Err(); err != nil {
		t.Fatalf("the hold's context ended though the promoted replica has the lock: %v", context.Cause(held))
	}
	// New acquisitions on the shard (now without replicas) succeed again.
	start := time.Now()
	var lerr error
	for time.Since(start) < 15*time.Second {
		var l context.Context
		l, lerr = other.TryLock(ctx, 0)
		if lerr == nil {
			_ = other.Unlock(l)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if lerr != nil {
		t.Fatalf("TryLock on the promoted shard still fails %v after the renewal there: %v", time.Since(start).Round(time.Millisecond), lerr)
	}
	select {
	case r := <-woken:
		t.Fatalf("the waiter returned while the lock was held: %v", r.err)
	default:
	}
	released := time.Now()
	if err := holder.Unlock(held); err != nil {
		t.Fatalf("Unlock after the failover: %v", err)
	}
	select {
	case r := <-woken:
		if r.err != nil {
			t.Fatalf("the waiter: %v", r.err)
		}
		if d := r.at.Sub(released); d > 5*time.Second {
			t.Errorf("the waiter took the lock %v after its release: not woken by the release message", d.Round(time.Millisecond))
		}
		if r.token <= tok1 {
			t.Errorf("the waiter's token %d not above the holder's %d", r.token, tok1)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the waiter has not taken the lock 20 s after its release")
	}
}
