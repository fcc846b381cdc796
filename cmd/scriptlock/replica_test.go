package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/layout"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// list against a replica's address (a read-only look, away from the
// primary) lists what the replica holds; it listed nothing and exited 0, as
// if no lock were held.
func TestListOnReplica(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, primary.Client(t), prefix)
	m := mustMutex(t, c, "order:7")
	if _, err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	d := deployment{name: "replica", url: "redis://" + replica.Addr, rc: replica.Client(t)}
	waitFor(t, ctx, func() bool {
		n, err := replica.Do(t, "EXISTS", m.Key()).AsInt64()
		return err == nil && n == 1
	})
	r := cli(ctx, d, "", "list", "--key-prefix", prefix)
	if r.code != exitOK || !strings.Contains(r.out, "order:7") {
		t.Fatalf("list on the replica: exit %d, want the lock the replica holds listed:\n%s%s", r.code, r.out, r.errOut)
	}
}

// inspect against a replica's address reads the replica's copy of the
// lock, but the Clients listen on the primary: the replica cannot tell a
// live Go waiter from a dead one, so none is shown as stale.
func TestInspectOnReplicaJudgesNoWaiter(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	rc := primary.Client(t)
	c := newClient(t, rc, prefix, scriptlock.WithWaiterTimeout(time.Minute))
	heldMutex(t, ctx, c, "order:8", "holder")
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _, _ = mustMutex(t, c, "order:8").Lock(scriptlock.WithOwner(wctx, "waiter")) }()
	k := layout.For(prefix+"order:8", false)
	waitFor(t, ctx, func() bool {
		n, err := replica.Do(t, "ZCARD", k.LockWaiters).AsInt64()
		return err == nil && n == 1
	})
	d := deployment{name: "replica", url: "redis://" + replica.Addr}
	r := inspectJSON(t, ctx, d, prefix, "order:8")
	if len(r.MutexWaiters) != 1 || r.MutexWaiters[0].Stale {
		t.Errorf("mutex_waiters on the replica %+v, want the live waiter, not judged stale", r.MutexWaiters)
	}
}
