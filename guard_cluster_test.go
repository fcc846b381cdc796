package scriptlock

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

func isAsk(re *rueidis.RedisError) bool { _, ask := re.IsAsk(); return ask }

// replicaOf finds the replica of primary p among the cluster's nodes.
func replicaOf(t *testing.T, cl *redistest.ClusterT, p *redistest.Node) *redistest.Node {
	t.Helper()
	for _, n := range cl.Nodes {
		info, err := n.Do(t, "INFO", "replication").ToString()
		if err == nil && infoField(info, "role") == "slave" && infoField(info, "master_port") == strconv.Itoa(p.Port) {
			return n
		}
	}
	t.Fatalf("no replica of %s", p.Addr)
	return nil
}

// A guarded Lock whose Client has not yet seen a slot move: the script is
// redirected (MOVED) to the new primary, whose only replica is stopped. The
// guard must cover that grant (ErrNotReplicated), not vouch for it with the
// old primary's WAIT, which saw no write and answered at once.
func TestGuardAfterMoved(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithClusterReplicas(1))
	c := newTestClient(t, cl.Client(t), loadedGuard())
	ctx := testCtx(t, 60*time.Second)
	m := mustMutex(t, c, "guard-moved")
	l, err := m.Lock(ctx) // the slot map loaded, the replicas counted
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
	mig := cl.StartMigration(t, m.Key())
	mig.Finish(t)
	replica := replicaOf(t, cl, mig.To)
	replica.Pause()
	defer replica.Resume()
	l, err = m.Lock(ctx)
	if err == nil {
		_ = m.Unlock(l)
		t.Fatal("Lock after the slot moved succeeded although the new primary's only replica is stopped: the guard did not cover the grant")
	}
	if !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("Lock after the slot moved: %v, want ErrNotReplicated", err)
	}
}

// A guarded Lock during a slot migration, on a name whose keys are not on
// the source yet: the script is sent on with ASK. rueidis failed on that
// (index out of range inside DoMulti, a panic in the caller); now the script
// and its WAIT follow the ASK together, the target answers TRYAGAIN (the
// script's keys are not all there), the attempt is made again until the
// migration ends or the wait does, and the grant that follows is covered by
// the guard.
func TestGuardDuringAskMigration(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithClusterReplicas(1))
	c := newTestClient(t, cl.Client(t), loadedGuard())
	ctx := testCtx(t, 60*time.Second)
	one := mustMutex(t, c, "{ask}one")
	l, err := one.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := one.Unlock(l); err != nil {
		t.Fatal(err)
	}
	mig := cl.StartMigration(t, one.Key())
	replica := replicaOf(t, cl, mig.To)
	replica.Pause()
	two := mustMutex(t, c, "{ask}two")
	if l, err := two.TryLock(ctx, time.Second); err == nil {
		_ = two.Unlock(l)
		t.Fatal("Lock during the migration succeeded although the target's only replica is stopped")
	} else if re := (*rueidis.RedisError)(nil); !errors.Is(err, ErrNotReplicated) && !(errors.As(err, &re) && (isAsk(re) || re.IsTryAgain())) {
		t.Fatalf("Lock during the migration: %v, want the refusal it kept meeting until its wait ran out (ASK, or TRYAGAIN), or ErrNotReplicated", err)
	}
	replica.Resume()
	mig.Finish(t)
	l, err = two.Lock(ctx)
	if err != nil {
		t.Fatalf("Lock after the migration: %v", err)
	}
	if err := two.Unlock(l); err != nil {
		t.Fatal(err)
	}
}

// TestGuardTryLockRedirected: a guarded TryLock without a wait whose Client
// has not yet seen a slot move is redirected (MOVED) and ran nothing: it is
// made on the slot's new primary, with its WAIT there, as an unguarded one
// is, rather than fail with the redirection. So is a LeanMutex's SET sent on
// with ASK during the migration.
func TestGuardTryLockRedirected(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithClusterReplicas(1))
	c := newTestClient(t, cl.Client(t), loadedGuard())
	ctx := testCtx(t, 60*time.Second)
	m := mustMutex(t, c, "{guard-redirect}mutex")
	l, err := m.Lock(ctx) // the slot map loaded, the replicas counted
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
	mig := cl.StartMigration(t, m.Key())
	lean := mustLean(t, c, "{guard-redirect}lean")
	l, err = lean.TryLock(ctx, 0)
	if err != nil {
		t.Fatalf("LeanMutex.TryLock(ctx, 0) during the migration: %v", err)
	}
	if err := lean.Unlock(l); err != nil {
		t.Fatal(err)
	}
	mig.Finish(t)
	l, err = m.TryLock(ctx, 0)
	if err != nil {
		t.Fatalf("TryLock(ctx, 0) after the slot moved: %v", err)
	}
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
}

// mutexOn returns a Mutex of c whose key the Cluster serves on primary p.
func mutexOn(t *testing.T, cl *redistest.ClusterT, c *Client, p *redistest.Node, name string) *Mutex {
	t.Helper()
	for i := range 1000 {
		m := mustMutex(t, c, name+"-"+strconv.Itoa(i))
		if cl.NodeFor(t, m.Key()) == p {
			return m
		}
	}
	t.Fatalf("no name %s-<n> on %s", name, p.Addr)
	return nil
}

// TestGuardPerShard: the failover guard counts replicas per shard. One
// primary without a replica (its only replica gone) must not turn the guard
// off on the others: a Lock on a shard whose only replica is stopped fails
// with ErrNotReplicated, while a Lock on the shard without a replica is sent
// without WAIT and succeeds.
func TestGuardPerShard(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithClusterReplicas(1))
	ps := cl.Primaries(t)
	bare, guarded := ps[0], ps[1]
	gone := replicaOf(t, cl, bare)
	gone.Kill()
	for n := "1"; n != "0"; time.Sleep(5 * time.Millisecond) {
		info, _ := bare.Do(t, "INFO", "replication").ToString()
		n = infoField(info, "connected_slaves")
	}
	c := newTestClient(t, cl.Client(t), WithFailoverGuard(true, 200*time.Millisecond))
	ctx := testCtx(t, 30*time.Second)
	onBare, onGuarded := mutexOn(t, cl, c, bare, "guard-shard-bare"), mutexOn(t, cl, c, guarded, "guard-shard-guarded")
	l, err := onBare.TryLock(ctx, 0)
	if err != nil {
		t.Fatalf("Lock on the shard without a replica: %v", err)
	}
	if err := onBare.Unlock(l); err != nil {
		t.Fatal(err)
	}
	stopped := replicaOf(t, cl, guarded)
	stopped.Pause()
	defer stopped.Resume()
	l, err = onGuarded.TryLock(ctx, 0)
	if err == nil {
		_ = onGuarded.Unlock(l)
		t.Fatal("Lock on a shard whose only replica is stopped succeeded: another shard without a replica turned the guard off")
	}
	if !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("Lock on a shard whose only replica is stopped: %v, want ErrNotReplicated", err)
	}
}

// keySlot agrees with Redis 7.0's CLUSTER KEYSLOT on each of these keys.
func TestKeySlot(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]uint16{"foo": 12182, "{foo}bar": 12182, "bar{foo}": 12182, "{}foo": 9500, "{user1000}.following": 3443} {
		if got := keySlot(key); got != want {
			t.Errorf("keySlot(%q) = %d, want %d", key, got, want)
		}
	}
}
