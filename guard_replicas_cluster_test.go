package scriptlock

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// tagOn returns a hash tag "{base-<n>}" whose slot the Cluster serves on
// primary p, so that every key of a name holding it is on p.
func tagOn(t *testing.T, cl *redistest.ClusterT, p *redistest.Node, base string) string {
	t.Helper()
	for i := range 1000 {
		tag := "{" + base + "-" + strconv.Itoa(i) + "}"
		if cl.NodeFor(t, tag) == p {
			return tag
		}
	}
	t.Fatalf("no tag %s-<n> on %s", base, p.Addr)
	return ""
}

// waitConnectedReplicas waits until primary p reports n connected replicas.
func waitConnectedReplicas(t *testing.T, p *redistest.Node, n int) {
	t.Helper()
	want := strconv.Itoa(n)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		info, _ := p.Do(t, "INFO", "replication").ToString()
		if infoField(info, "connected_slaves") == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: connected_slaves not %s after 10s", p.Addr, want)
		}
	}
}

// TestGuardAllReplicasCluster: on a Cluster, GuardAllReplicas waits for each
// shard's own replicas. Shard two's primary has two replicas, shard one's
// one (its other replica killed). With one of shard two's replicas stopped,
// an acquisition there that one replica acknowledged is undone and fails
// with ErrNotReplicated, leaving no key; on shard one, where the one replica
// acknowledged it, it is granted: a WAIT for two there would wait for a
// replica that does not exist. In a watchdog round with holds on both
// shards, each slot's WAIT asks for its own shard's number: the holds on
// shard two end by the deadline of their last renewal both replicas
// acknowledged, those on shard one live on, and so does a hold on shard two
// whose handle waits for one replica (WithGuardReplicas(1) over the
// Client's GuardAllReplicas) in the same round.
func TestGuardAllReplicasCluster(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithClusterReplicas(2))
	ps := cl.Primaries(t)
	two, one := ps[0], ps[1]
	replicaOf(t, cl, one).Kill()
	waitConnectedReplicas(t, one, 1)
	stopped := replicaOf(t, cl, two)

	const lease, every = 2 * time.Second, 250 * time.Millisecond
	c := newTestClient(t, cl.Client(t), WithFailoverGuard(true, 100*time.Millisecond),
		WithWatchdog(lease, every), WithGuardReplicas(GuardAllReplicas))
	ctx := testCtx(t, 60*time.Second)
	onTwo := guardKinds(t, c, tagOn(t, cl, two, "two")+"lock")
	onOne := guardKinds(t, c, tagOn(t, cl, one, "one")+"lock")

	// Counted before any replica is stopped: a count taken while one is
	// would wait for it.
	lockUnlockAll(t, ctx, onTwo, "on the two-replica shard, both running")
	lockUnlockAll(t, ctx, onOne, "on the one-replica shard")
	for _, s := range []struct {
		ls   map[string]Locker
		want int
	}{{onTwo, 2}, {onOne, 1}} {
		m := s.ls["Mutex"].(*Mutex)
		if g := c.guarded(ctx, m.cfg, m.Key()); g.acks != s.want {
			t.Fatalf("%s: the guard waits for %d replicas, want its shard's %d", m.Key(), g.acks, s.want)
		}
	}

	stopped.Pause()
	checkNotReplicated(t, ctx, two, onTwo, "on the two-replica shard, one replica stopped")
	lockUnlockAll(t, ctx, onOne, "on the one-replica shard, a replica of another shard stopped")
	stopped.Resume()

	// One renewal round: holds on both shards, and in the slot of those on
	// shard two (so under the same WAIT) a hold that waits for one replica.
	renewTwo := tagOn(t, cl, two, "renew-two")
	holdsTwo := lockAll(t, ctx, guardKinds(t, c, renewTwo+"lock"), lease)
	holdsOne := lockAll(t, ctx, guardKinds(t, c, tagOn(t, cl, one, "renew-one")+"lock"), lease)
	holdsAny := lockAll(t, ctx, map[string]Locker{"Mutex WithGuardReplicas(1)": mustMutex(t, c, renewTwo+"any", WithGuardReplicas(1))}, lease)
	stopped.Pause()
	defer stopped.Resume()
	holdsTwo = pausedNow(holdsTwo, lease)
	for k, h := range holdsTwo {
		checkEndsBy(t, k, h, "a renewal on the two-replica shard")
	}
	time.Sleep(time.Until(latest(holdsTwo).Add(guardLate)))
	for what, hs := range map[string]map[string]guardedHold{
		"on the one-replica shard, its replica acknowledging every renewal":        holdsOne,
		"on the two-replica shard waiting for one replica, the running one acking": holdsAny,
	} {
		for k, h := range hs {
			if err := context.Cause(h.lctx); err != nil {
				t.Errorf("%s %s: hold ended (%v) past the deadline of its grant", k, what, err)
			}
		}
	}
}

// TestGuardReplicasMoved: after a slot moves to another shard, a guarded
// acquisition waits for the new primary's replicas, not for the number
// counted for the old one. The Client counted each name's slot on its old
// primary and has not counted again: its script meets MOVED, and neither
// the redirected call nor the next (sent to the new primary directly) may
// use the old shard's number. From the two-replica shard to the one-replica
// shard, waiting for two would fail every acquisition although the one
// replica acknowledged it; from the one-replica shard to the two-replica
// shard, one of whose replicas is stopped, waiting for one would grant
// under GuardAllReplicas what a failover to the stopped replica loses; the
// error names the two the WAIT asked for, also for the redirected call.
func TestGuardReplicasMoved(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithClusterReplicas(2))
	ps := cl.Primaries(t)
	two, one := ps[0], ps[1] // StartMigration moves to the first other primary
	gone := replicaOf(t, cl, one)
	gone.Kill()
	waitConnectedReplicas(t, one, 1)
	// Out of the nodes the migration waits for to agree on the slot map.
	cl.Nodes = slices.DeleteFunc(cl.Nodes, func(n *redistest.Node) bool { return n == gone })
	c := newTestClient(t, cl.Client(t), WithFailoverGuard(true, 100*time.Millisecond), WithGuardReplicas(GuardAllReplicas))
	ctx := testCtx(t, 60*time.Second)
	toOne := mustMutex(t, c, tagOn(t, cl, two, "to-one")+"lock")
	toTwo := mustMutex(t, c, tagOn(t, cl, one, "to-two")+"lock")
	for _, m := range []*Mutex{toOne, toTwo} { // counted with every replica running
		// A loaded replica may miss the 100 ms: the next attempt asks again.
		l, err := replicatedLock(func() (context.Context, error) { return m.Lock(ctx) })
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
	for i := range 2 {
		// A refusal waiting for the one replica there (a loaded replica
		// missing the 100 ms) is asked again; one waiting for the old
		// shard's two is the failure this checks, and fails at once.
		l, err := replicatedLock(func() (context.Context, error) {
			l, err := toOne.Lock(ctx)
			if err != nil && !strings.Contains(err.Error(), "(1 needed)") {
				t.Fatalf("Lock %d after its slot moved to the one-replica shard: %v", i, err)
			}
			return l, err
		})
		if err != nil {
			t.Fatalf("Lock %d after its slot moved to the one-replica shard: %v", i, err)
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
	stopped := replicaOf(t, cl, two)
	stopped.Pause()
	defer stopped.Resume()
	for i := range 2 {
		l, err := toTwo.Lock(ctx)
		if err == nil {
			_ = toTwo.Unlock(l)
			t.Fatalf("Lock %d after its slot moved to the two-replica shard, one of its replicas stopped: granted under GuardAllReplicas", i)
		}
		if !errors.Is(err, ErrNotReplicated) {
			t.Fatalf("Lock %d after its slot moved to the two-replica shard, one of its replicas stopped: %v, want ErrNotReplicated", i, err)
		}
		if !strings.Contains(err.Error(), "(2 needed)") {
			t.Errorf("Lock %d after its slot moved to the two-replica shard: %v; want the error to name the 2 acknowledgements its WAIT asked for", i, err)
		}
	}
}

// TestGuardMovedToPrimaryWithoutReplicas: a guarded acquisition whose slot
// moved to a primary without replicas is granted. Its script meets MOVED
// and is sent on to that primary, which has no replica to wait for: the
// write stands, as one the guard sends there without WAIT, where waiting
// for the old shard's number failed it with ErrNotReplicated.
func TestGuardMovedToPrimaryWithoutReplicas(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithClusterReplicas(1))
	ps := cl.Primaries(t)
	from, bare := ps[0], ps[1] // StartMigration moves to the first other primary
	gone := replicaOf(t, cl, bare)
	gone.Kill()
	waitConnectedReplicas(t, bare, 0)
	// Out of the nodes the migration waits for to agree on the slot map.
	cl.Nodes = slices.DeleteFunc(cl.Nodes, func(n *redistest.Node) bool { return n == gone })
	c := newTestClient(t, cl.Client(t), loadedGuard())
	ctx := testCtx(t, 60*time.Second)
	m := mustMutex(t, c, tagOn(t, cl, from, "to-bare")+"lock")
	l, err := m.Lock(ctx) // counted: one replica on from, none on bare
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
	if g := c.guarded(ctx, m.cfg, m.Key()); g.acks != 1 {
		t.Fatalf("the guard waits for %d replicas before the move, want from's 1", g.acks)
	}
	mig := cl.StartMigration(t, m.Key())
	if mig.To != bare {
		t.Fatalf("migration to %s, want %s", mig.To.Addr, bare.Addr)
	}
	mig.Finish(t)
	l, err = m.Lock(ctx)
	if err != nil {
		t.Fatalf("Lock after its slot moved to a primary without replicas: %v", err)
	}
	if n, err := bare.Do(t, "EXISTS", m.Key()).AsInt64(); err != nil || n != 1 {
		t.Errorf("lock key on the primary its slot moved to: EXISTS = %d, %v; want 1", n, err)
	}
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
}

// withSlotCount gives one slot its own count, splitting its range, and
// leaves the others as they were.
func TestWithSlotCount(t *testing.T) {
	t.Parallel()
	rs := []slotReplicas{{0, 9, 1}, {10, 10, 2}, {11, 20, 1}}
	for _, tc := range []struct {
		slot    uint16
		n       int32
		want    []slotReplicas
		changed bool
	}{
		{5, 2, []slotReplicas{{0, 4, 1}, {5, 5, 2}, {6, 9, 1}, {10, 10, 2}, {11, 20, 1}}, true},
		{0, 2, []slotReplicas{{0, 0, 2}, {1, 9, 1}, {10, 10, 2}, {11, 20, 1}}, true},
		{20, 0, []slotReplicas{{0, 9, 1}, {10, 10, 2}, {11, 19, 1}, {20, 20, 0}}, true},
		{10, 3, []slotReplicas{{0, 9, 1}, {10, 10, 3}, {11, 20, 1}}, true},
		{15, 1, rs, false},
		{21, 2, rs, false},
	} {
		got, changed := withSlotCount(rs, tc.slot, tc.n)
		if changed != tc.changed || !slices.Equal(got, tc.want) {
			t.Errorf("slot %d to %d: %v, %v; want %v, %v", tc.slot, tc.n, got, changed, tc.want, tc.changed)
		}
	}
	if !slices.Equal(rs, []slotReplicas{{0, 9, 1}, {10, 10, 2}, {11, 20, 1}}) {
		t.Errorf("the ranges given changed: %v", rs)
	}
}
