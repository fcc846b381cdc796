package scriptlock

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// semaphoresOn returns a Semaphore (name-sem-<n>) and a PermitSemaphore
// (name-permits-<n>) whose keys primary p serves.
func semaphoresOn(t *testing.T, cl *redistest.ClusterT, c *Client, p *redistest.Node, name string) (*Semaphore, *PermitSemaphore) {
	t.Helper()
	var sem *Semaphore
	var permits *PermitSemaphore
	for i := 0; i < 1000 && (sem == nil || permits == nil); i++ {
		if s := mustSem(t, c, name+"-sem-"+strconv.Itoa(i)); sem == nil && cl.NodeFor(t, s.Key()) == p {
			sem = s
		}
		if s := mustPermits(t, c, name+"-permits-"+strconv.Itoa(i)); permits == nil && cl.NodeFor(t, s.Key()) == p {
			permits = s
		}
	}
	if sem == nil || permits == nil {
		t.Fatalf("no semaphore name %s-<n> on %s", name, p.Addr)
	}
	return sem, permits
}

// TestSemaphoreGuardPerShard: on a Cluster the semaphores' guard counts
// replicas per shard, as the locks' does. Acquisitions on a shard whose only
// replica is gone are granted without WAIT; on a shard whose only replica is
// stopped they fail with ErrNotReplicated and take nothing.
func TestSemaphoreGuardPerShard(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithClusterReplicas(1))
	ps := cl.Primaries(t)
	bare, guarded := ps[0], ps[1]
	replicaOf(t, cl, bare).Kill()
	for n := "1"; n != "0"; time.Sleep(5 * time.Millisecond) {
		info, _ := bare.Do(t, "INFO", "replication").ToString()
		n = infoField(info, "connected_slaves")
	}
	c := newTestClient(t, cl.Client(t), WithFailoverGuard(true, 200*time.Millisecond))
	ctx := testCtx(t, 30*time.Second)
	for _, shard := range []struct {
		name    string
		node    *redistest.Node
		stopped bool
	}{{"without a replica", bare, false}, {"whose only replica is stopped", guarded, true}} {
		sem, permits := semaphoresOn(t, cl, c, shard.node, "guard-shard")
		if _, err := sem.TrySetPermits(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := permits.TrySetPermits(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if shard.stopped {
			r := replicaOf(t, cl, shard.node)
			r.Pause()
			defer r.Resume()
		}
		err := sem.TryAcquire(ctx, 1, 0)
		if shard.stopped && !errors.Is(err, ErrNotReplicated) {
			t.Errorf("Semaphore on a shard %s: %v, want ErrNotReplicated", shard.name, err)
		}
		if !shard.stopped && err != nil {
			t.Errorf("Semaphore on a shard %s: %v", shard.name, err)
		}
		left := int64(1)
		if err == nil {
			left = 0 // held, given back below
		}
		if n := countAt(t, shard.node, sem.Key()); n != left {
			t.Errorf("Semaphore on a shard %s: %d permits left, want %d", shard.name, n, left)
		}
		if err == nil {
			_ = sem.Release(ctx, 1)
		}
		id, err := permits.TryAcquire(ctx, time.Minute, 0)
		if shard.stopped && !errors.Is(err, ErrNotReplicated) {
			t.Errorf("PermitSemaphore on a shard %s: %v, want ErrNotReplicated", shard.name, err)
		}
		if !shard.stopped && err != nil {
			t.Errorf("PermitSemaphore on a shard %s: %v", shard.name, err)
		}
		held := int64(0)
		if err == nil {
			held = 1 // given back below
		}
		if st, err := permits.State(ctx); err != nil || st.Available != 1-held || st.Held != held {
			t.Errorf("PermitSemaphore on a shard %s: %+v, %v; want %d available, %d held", shard.name, st, err, 1-held, held)
		}
		if err == nil {
			_ = permits.Release(ctx, id)
		}
	}
}
