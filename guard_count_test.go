package scriptlock

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// replicate makes n a replica of primary (or a primary: primary nil) and
// waits until the link is up.
func replicate(t *testing.T, n, primary *redistest.Node) {
	t.Helper()
	args := []string{"REPLICAOF", "NO", "ONE"}
	if primary != nil {
		args = []string{"REPLICAOF", "127.0.0.1", strconv.Itoa(primary.Port)}
	}
	if err := n.Do(t, args...).Error(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); primary != nil; {
		mine, _ := n.Do(t, "INFO", "replication").ToString()
		theirs, _ := primary.Do(t, "INFO", "replication").ToString()
		if strings.Contains(mine, "master_link_status:up") && strings.Contains(theirs, "state=online") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not sync from %s", n.Addr, primary.Addr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// detachReplica makes replica a primary and waits until primary lists no
// replica.
func detachReplica(t *testing.T, primary, replica *redistest.Node) {
	t.Helper()
	replicate(t, replica, nil)
	if !eventually(10*time.Second, func() bool {
		info, _ := primary.Do(t, "INFO", "replication").ToString()
		return infoField(info, "connected_slaves") == "0"
	}) {
		t.Fatalf("%s still lists its replica %s", primary.Addr, replica.Addr)
	}
}

// TestGuardCountOnReplica: a count taken while the Client's node is a
// replica (a demoted primary, before the Client has seen the failover)
// counts no primary's replicas: it is no count of zero, and once the node is
// a primary again with a replica, acquisitions are guarded.
func TestGuardCountOnReplica(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	replicate(t, replica, nil)
	replicate(t, primary, replica)
	c := newTestClient(t, primary.Client(t), WithFailoverGuard(true, 200*time.Millisecond))
	ctx := testCtx(t, 20*time.Second)
	m := mustMutex(t, c, "guard-count-replica")
	if _, err := m.TryLock(ctx, 0); err == nil || !strings.Contains(err.Error(), "READONLY") {
		t.Fatalf("TryLock on a replica: %v, want READONLY", err)
	}
	replicate(t, primary, nil)
	replicate(t, replica, primary)
	replica.Pause()
	defer replica.Resume()
	l, err := m.Lock(ctx)
	if err == nil {
		_ = m.Unlock(l)
		t.Fatal("Lock succeeded with the only replica stopped: the count taken on a replica turned the guard off")
	}
	if !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("Lock with the replica stopped: %v, want ErrNotReplicated", err)
	}
}

// TestGuardCountAfterIdle: a Client that acquired nothing for a while does
// not decide its next acquisition on the count it took before: replicas
// gone since do not fail it with ErrNotReplicated, and a replica attached
// since guards it.
func TestGuardCountAfterIdle(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	c := newTestClient(t, primary.Client(t), WithFailoverGuard(true, 200*time.Millisecond))
	ctx := testCtx(t, 20*time.Second)
	m := mustMutex(t, c, "guard-count-idle")
	idle := func() { c.guard.checked.Store(monoNanos(time.Now().Add(-time.Minute))) }
	warmWith(t, m, ctx) // counted: one replica
	detachReplica(t, primary, replica)
	idle()
	l, err := m.Lock(ctx)
	if err != nil {
		t.Fatalf("Lock a minute after the count, the replica gone since: %v", err)
	}
	if err := m.Unlock(l); err != nil {
		t.Fatal(err)
	}
	replicate(t, replica, primary) // a replica is attached again
	replica.Pause()
	defer replica.Resume()
	idle()
	l, err = m.Lock(ctx)
	if err == nil {
		_ = m.Unlock(l)
		t.Fatal("Lock a minute after a count of no replicas succeeded although a replica, stopped, is attached since: it was not guarded")
	}
	if !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("Lock with the attached replica stopped: %v, want ErrNotReplicated", err)
	}
}
