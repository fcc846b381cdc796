package scriptlock

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// replicaState is the state the primary's INFO replication gives the
// replica on port (wait_bgsave, send_bulk, online), "" when it lists none.
func replicaState(t *testing.T, primary *redistest.Node, port int) string {
	t.Helper()
	info, _ := primary.Do(t, "INFO", "replication").ToString()
	for line := range strings.Lines(info) {
		if !strings.HasPrefix(line, "slave") || !strings.Contains(line, ",port="+strconv.Itoa(port)+",") {
			continue
		}
		for f := range strings.SplitSeq(strings.TrimSpace(line), ",") {
			if s, ok := strings.CutPrefix(f, "state="); ok {
				return s
			}
		}
	}
	return ""
}

// TestGuardSyncingReplica: a replica still in its initial sync cannot
// acknowledge a WAIT, so the count leaves it out: while the primary holds
// the sync in wait_bgsave (a diskless sync's delay), guarded acquisitions
// are granted without waiting for it, and once it is online a recount
// guards them again (ErrNotReplicated with it stopped).
func TestGuardSyncingReplica(t *testing.T) {
	t.Parallel()
	const delay = 5 * time.Second
	primary := redistest.Server(t, redistest.WithArgs("--repl-diskless-sync", "yes",
		"--repl-diskless-sync-delay", strconv.Itoa(int(delay/time.Second))))
	replica := redistest.Server(t)
	if err := replica.Do(t, "REPLICAOF", "127.0.0.1", strconv.Itoa(primary.Port)).Error(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(delay / 2); replicaState(t, primary, replica.Port) != "wait_bgsave"; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the replica not in wait_bgsave after %s: %q", delay/2, replicaState(t, primary, replica.Port))
		}
	}

	c := newTestClient(t, primary.Client(t), WithFailoverGuard(true, 100*time.Millisecond))
	ctx := testCtx(t, 30*time.Second)
	m := mustMutex(t, c, "guard-syncing")
	start := time.Now()
	l, err := m.Lock(ctx)
	took := time.Since(start)
	if s := replicaState(t, primary, replica.Port); s != "wait_bgsave" {
		t.Fatalf("the replica left wait_bgsave (%q) before the acquisition ended: the test did not see a syncing replica", s)
	}
	if err != nil {
		t.Fatalf("Lock while the only replica is in its initial sync (wait_bgsave): %v; want it granted, the replica not counted", err)
	}
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
	if bound := time.Second; took > bound {
		t.Errorf("Lock while the only replica syncs took %s, more than %s", took.Round(time.Millisecond), bound)
	}

	for deadline := time.Now().Add(delay + 5*time.Second); replicaState(t, primary, replica.Port) != "online"; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the replica not online after %s: %q", delay+5*time.Second, replicaState(t, primary, replica.Port))
		}
	}
	replica.Pause()
	defer replica.Resume()
	// The count taken during the sync is recounted once guardRefresh old,
	// in the background of an acquisition made with it.
	start = time.Now()
	for {
		l, err := m.Lock(ctx)
		if errors.Is(err, ErrNotReplicated) {
			break
		}
		if err != nil {
			t.Fatalf("Lock with the online replica stopped: %v", err)
		}
		if err := m.Unlock(l); err != nil {
			t.Fatal(err)
		}
		if time.Since(start) > guardRefresh+3*time.Second {
			t.Fatalf("Lock with the online replica stopped still granted %s after it came online: the guard is not back", time.Since(start).Round(time.Millisecond))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// onlineReplicas counts the slaveN lines in state online, and falls back on
// connected_slaves only when no slaveN line gives a state.
func TestGuardOnlineReplicasParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		info string
		n    int
		ok   bool
	}{
		{"role:master\r\nconnected_slaves:0\r\nmaster_failover_state:no-failover\r\n", 0, true},
		{"role:master\r\nconnected_slaves:2\r\n" +
			"slave0:ip=127.0.0.1,port=7001,state=online,offset=42,lag=0\r\n" +
			"slave1:ip=127.0.0.1,port=7002,state=wait_bgsave,offset=0,lag=0\r\n", 1, true},
		{"role:master\r\nconnected_slaves:3\r\n" +
			"slave0:ip=127.0.0.1,port=7001,state=send_bulk,offset=0,lag=0\r\n" +
			"slave1:ip=127.0.0.1,port=7002,state=wait_bgsave,offset=0,lag=0\r\n" +
			"slave2:ip=::1,port=7003,state=online,offset=7,lag=1\r\n" +
			"slave10:ip=127.0.0.1,port=7004,state=online,offset=7,lag=1\r\n", 2, true},
		{"role:master\r\nconnected_slaves:1\r\nslave0:garbled\r\n", 1, true},
		{"role:master\r\nslaves:ip=x,state=online\r\n", 0, false},
	} {
		if n, ok := onlineReplicas(tc.info); n != tc.n || ok != tc.ok {
			t.Errorf("onlineReplicas(%q) = %d, %v; want %d, %v", tc.info, n, ok, tc.n, tc.ok)
		}
	}
}

// waitSlotsListReplicas waits until every node's CLUSTER SLOTS names every
// node of the Cluster, each range's replicas beside its primary: a client
// reads its nodes from it, and a new Cluster's nodes learn of the replicas
// by gossip, after the harness returns.
func waitSlotsListReplicas(t *testing.T, cl *redistest.ClusterT) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		all := true
		for _, n := range cl.Nodes {
			ranges, err := n.Do(t, "CLUSTER", "SLOTS").ToArray()
			all = all && err == nil && len(ranges) > 0
			ports := map[int64]bool{}
			for _, r := range ranges {
				f, _ := r.ToArray()
				for _, node := range f[min(2, len(f)):] {
					if fields, _ := node.ToArray(); len(fields) >= 2 {
						port, _ := fields[1].AsInt64()
						ports[port] = true
					}
				}
			}
			all = all && len(ports) == len(cl.Nodes)
		}
		if all {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("CLUSTER SLOTS does not list all %d nodes after 10s", len(cl.Nodes))
		}
	}
}

// TestGuardCountStalledReplica: a stalled node costs the count its own
// answer only. On a Cluster with one replica stopped (SIGSTOP), a count
// under the background refresh's deadline ends well within it with every
// shard counted, and so does a Client's first acquisition, which waits for
// the count: asked one after another under one deadline, the stopped node
// held up the nodes after it until the deadline, and the slot map went
// unread.
func TestGuardCountStalledReplica(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithClusterReplicas(1))
	waitSlotsListReplicas(t, cl)
	rc := cl.Client(t)
	if n := len(rc.Nodes()); n != len(cl.Nodes) {
		t.Fatalf("the client knows %d nodes, want all %d", n, len(cl.Nodes))
	}
	guard := WithFailoverGuard(true, 200*time.Millisecond)
	counter := newTestClient(t, rc, guard)
	first := newTestClient(t, rc, guard)
	ctx := testCtx(t, 30*time.Second)
	m := mustMutex(t, first, "guard-stalled-count")
	var stopped *redistest.Node // a replica of another shard than m's
	for _, p := range cl.Primaries(t) {
		if p != cl.NodeFor(t, m.Key()) {
			stopped = replicaOf(t, cl, p)
			break
		}
	}
	// Loaded before: the count is timed here, not a NOSCRIPT and the EVAL
	// that follows it.
	if err := generated.Preload(ctx, rc); err != nil {
		t.Fatal(err)
	}
	stopped.Pause()
	defer stopped.Resume()

	const deadline, bound = 2 * time.Second, time.Second
	cctx, cancel := context.WithTimeout(ctx, deadline)
	start := time.Now()
	n, shards, _, ok := counter.countReplicas(cctx)
	took := time.Since(start)
	cancel()
	if took > bound {
		t.Errorf("count with a replica stopped took %s (deadline %s), more than %s", took.Round(time.Millisecond), deadline, bound)
	}
	if !ok || n != 1 {
		t.Errorf("count with a replica stopped: %d, ok %v; want 1, true", n, ok)
	}
	covered := 0
	for _, s := range shards {
		covered += int(s.end) - int(s.start) + 1
		if s.replicas != 1 {
			t.Errorf("slots %d-%d counted %d replicas, want 1", s.start, s.end, s.replicas)
		}
	}
	if covered != 16384 {
		t.Errorf("the count's slot map covers %d slots, want 16384 (shards %v)", covered, shards)
	}

	// The first acquisition waits for the count, under its own context.
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	start = time.Now()
	l, err := m.Lock(lctx)
	took = time.Since(start)
	if err != nil {
		t.Errorf("first Lock with another shard's replica stopped: %v", err)
	} else if err := m.Unlock(l); err != nil {
		t.Error(err)
	}
	if bound := time.Second + 200*time.Millisecond; took > bound {
		t.Errorf("first Lock with another shard's replica stopped took %s, more than %s", took.Round(time.Millisecond), bound)
	}
}

// TestGuardConcurrentFirstCounts: first acquisitions made at once each wait
// for a count; asking the primary once for all of them, every one gets its
// answer (no replicas: unguarded), none is guarded for want of one.
func TestGuardConcurrentFirstCounts(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, redistest.Server(t).Client(t), WithFailoverGuard(true, 100*time.Millisecond))
	ctx := testCtx(t, 20*time.Second)
	errs := make(chan error, 16)
	for i := range cap(errs) {
		m := mustMutex(t, c, "guard-first-"+strconv.Itoa(i))
		go func() {
			l, err := m.Lock(ctx)
			if err == nil {
				err = m.Unlock(l)
			}
			errs <- err
		}()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Errorf("first Lock on a primary without replicas, with others at once: %v", err)
		}
	}
}
