package scriptlock

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestClusterFailoverWhileHeld: the primary serving a held lock hands over
// to its replica (CLUSTER FAILOVER, which loses no write) while the
// watchdog renews the lock, under the failover guard, and a waiter waits on
// it. The watchdog goes on renewing on the promoted replica, the hold's
// context is not ended, Unlock releases the lock there, and the waiter,
// subscribed on the demoted primary, is woken by the release rather than
// at its fallback timer (the lease, 30 s). A waiting Mutex also calls
// again every third of its waiter timeout (5 s by default): two minutes
// keeps that call from taking the lock soon after the release, which would
// hide a lost wake.
func TestClusterFailoverWhileHeld(t *testing.T) {
	t.Parallel()
	holderAndWaiterOnCluster(t, func(t *testing.T, cl *redistest.ClusterT, h, w *Client, sharded bool) {
		ctx := testCtx(t, 90*time.Second)
		holder, waiter := mustMutex(t, h, "failing"), mustMutex(t, w, "failing")
		held, err := holder.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		woken := make(chan time.Time, 1)
		got := within(t, 60*time.Second, "the waiter's Lock", func() error {
			l, err := waiter.Lock(ctx)
			woken <- time.Now()
			if err != nil {
				return err
			}
			return waiter.Unlock(l)
		})
		from := cl.NodeFor(t, waiter.Key())
		wake := w.subs.ownWake(waiter.wake)
		if !eventually(10*time.Second, func() bool { return subscribers(t, from, sharded, wake) == 1 }) {
			t.Fatal("the waiter did not subscribe on the node serving its lock")
		}
		replica := failOver(t, cl, from)
		if !eventually(10*time.Second, func() bool { return cl.NodeFor(t, waiter.Key()) == replica }) {
			t.Fatalf("the promoted %s does not serve the lock", replica.Addr)
		}
		time.Sleep(3 * time.Second)
		if err := held.Err(); err != nil {
			t.Fatalf("the hold's context ended while the lock was held: %v (%v)", err, context.Cause(held))
		}
		pttl, err := replica.Do(t, "PTTL", holder.Key()).AsInt64()
		if err != nil || pttl < 28000 {
			t.Fatalf("lock on the promoted %s: PTTL %d (%v), want renewed to over 28 s", replica.Addr, pttl, err)
		}
		released := time.Now()
		if err := holder.Unlock(held); err != nil {
			t.Fatalf("Unlock after the failover: %v", err)
		}
		got()
		if d := (<-woken).Sub(released); d > 4*time.Second {
			t.Errorf("the waiter took the lock %v after its release: not woken by the release message", d.Round(time.Millisecond))
		}
	})
}

// holderAndWaiterOnCluster runs f in a subtest with sharded pub/sub and in
// one without, each on a Cluster of three primaries with a replica each,
// with a holder's Client h and a waiter's w on it, the failover guard on:
// the watchdog renews a 30 s lease, and a waiter calls again at its
// fallback timer of two minutes only.
func holderAndWaiterOnCluster(t *testing.T, f func(t *testing.T, cl *redistest.ClusterT, h, w *Client, sharded bool)) {
	for _, sharded := range []bool{true, false} {
		name := "plain"
		if sharded {
			name = "sharded"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cl := redistest.Cluster(t, 3, redistest.WithClusterReplicas(1))
			// loadedGuard: six servers beside the other tests on 2 cores
			// answered a WAIT later than 100 ms, and failed a holder's
			// acquisition before any failover.
			opts := []Option{sharedPrefix(t), WithShardedPubSub(sharded), WithWatchdog(30*time.Second, 500*time.Millisecond), WithWaiterTimeout(2 * time.Minute),
				loadedGuard()}
			f(t, cl, newTestClient(t, cl.Client(t), opts...), newTestClient(t, cl.Client(t), opts...), sharded)
		})
	}
}

// failOver hands primary from over to its replica (CLUSTER FAILOVER, once
// the replica has from's writes) and returns the replica once the Cluster
// lists it as a primary.
func failOver(t *testing.T, cl *redistest.ClusterT, from *redistest.Node) *redistest.Node {
	t.Helper()
	replica := replicaOf(t, cl, from)
	if err := from.Do(t, "WAIT", "1", "5000").Error(); err != nil {
		t.Fatal(err)
	}
	if err := replica.Do(t, "CLUSTER", "FAILOVER").Error(); err != nil {
		t.Fatalf("CLUSTER FAILOVER on %s: %v", replica.Addr, err)
	}
	if !eventually(15*time.Second, func() bool { return slices.Contains(cl.Primaries(t), replica) }) {
		t.Fatalf("%s not promoted", replica.Addr)
	}
	return replica
}
