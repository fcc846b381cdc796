package scriptlock

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestGuardMovedRoutedDirectly: a guarded acquisition whose slot moved to
// another shard waits for the new primary's replicas also when the Client's
// connection already knows the move (its slot map read again, as after any
// MOVED or a closed connection) and sends the script to the new primary
// directly, meeting no MOVED for redirect to follow. The replica count was
// taken with the old slot map. From the two-replica shard to the
// one-replica shard, waiting for two failed every acquisition although the
// one replica acknowledged it; from the one-replica shard to the
// two-replica shard, one of whose replicas is stopped, waiting for one
// granted under GuardAllReplicas what a failover to the stopped replica
// loses.
func TestGuardMovedRoutedDirectly(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithClusterReplicas(2))
	ps := cl.Primaries(t)
	two, one := ps[0], ps[1] // StartMigration moves to the first other primary
	gone := replicaOf(t, cl, one)
	gone.Kill()
	waitConnectedReplicas(t, one, 1)
	// Out of the nodes the migration waits for to agree on the slot map.
	cl.Nodes = slices.DeleteFunc(cl.Nodes, func(n *redistest.Node) bool { return n == gone })
	waitConnectedReplicas(t, two, 2)
	rc := cl.Client(t)
	// A wait for the replicas' acknowledgements that a loaded machine's
	// replicas meet (with 100 ms, the warm-up below has failed with
	// ErrNotReplicated); the stopped replica below never acknowledges.
	c := newTestClient(t, rc, WithFailoverGuard(true, time.Second), WithGuardReplicas(GuardAllReplicas))
	ctx := testCtx(t, 60*time.Second)
	toOne := mustMutex(t, c, tagOn(t, cl, two, "routed-to-one")+"lock")
	toTwo := mustMutex(t, c, tagOn(t, cl, one, "routed-to-two")+"lock")
	for _, m := range []*Mutex{toOne, toTwo} { // counted with every replica running
		l, err := m.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Unlock(l); err != nil {
			t.Fatal(err)
		}
	}

	mig := cl.StartMigration(t, toOne.Key())
	if mig.To != one {
		t.Fatalf("migration to %s, want %s", mig.To.Addr, one.Addr)
	}
	mig.Finish(t)
	learnMove(t, ctx, rc, toOne.Key())
	for i := range 2 {
		l, err := toOne.Lock(ctx)
		if err != nil {
			t.Fatalf("Lock %d after its slot moved to the one-replica shard, sent there directly: %v", i, err)
		}
		if err := toOne.Unlock(l); err != nil {
			t.Fatal(err)
		}
	}

	mig = cl.StartMigration(t, toTwo.Key())
	if mig.To != two {
		t.Fatalf("migration to %s, want %s", mig.To.Addr, two.Addr)
	}
	mig.Finish(t)
	learnMove(t, ctx, rc, toTwo.Key())
	stopped := replicaOf(t, cl, two)
	stopped.Pause()
	defer stopped.Resume()
	for i := range 2 {
		l, err := toTwo.Lock(ctx)
		if err == nil {
			_ = toTwo.Unlock(l)
			t.Fatalf("Lock %d after its slot moved to the two-replica shard, sent there directly, one of its replicas stopped: granted under GuardAllReplicas", i)
		}
		if !errors.Is(err, ErrNotReplicated) {
			t.Fatalf("Lock %d after its slot moved to the two-replica shard, sent there directly, one of its replicas stopped: %v, want ErrNotReplicated", i, err)
		}
		if !strings.Contains(err.Error(), "(2 needed)") {
			t.Errorf("Lock %d after its slot moved to the two-replica shard, sent there directly: %v; want the error to name the 2 acknowledgements its WAIT asked for", i, err)
		}
	}
}

// learnMove has rc learn that key's slot moved: a plain command meets MOVED,
// which has rueidis read the slot map again; a dedicated connection, which
// follows no redirection, then reaches the new primary directly.
func learnMove(t *testing.T, ctx context.Context, rc rueidis.Client, key string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if err := rc.Do(ctx, rc.B().Get().Key(key).Build()).Error(); err != nil && !rueidis.IsRedisNil(err) {
			t.Fatalf("GET %s: %v", key, err)
		}
		var err error
		_ = rc.Dedicated(func(d rueidis.DedicatedClient) error {
			err = d.Do(ctx, d.B().Get().Key(key).Build()).Error()
			return nil
		})
		if err == nil || rueidis.IsRedisNil(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the connection still sends %s to its old primary after 10s: %v", key, err)
		}
	}
}
