package scriptlock

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

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
