package main

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/layout"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A user that may read the locks but not ask who listens (an ACL without
// PUBSUB) still inspects a Mutex with Go waiters: the waiters are listed,
// not judged stale.
func TestStaleMutexWaitersWithoutPubsub(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t, redistest.WithArgs("--user", "ops", "on", ">s3cret", "~*", "&*", "+@all", "-pubsub"))
	ctx := testCtx(t, 20*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, node.Client(t), prefix)
	heldMutex(t, ctx, c, "m", "holder")
	k := layout.For(prefix+"m", false)
	const waiter = "0badc0de-0000-4000-8000-000000000000:gone"
	if err := node.Do(t, "ZADD", k.LockWaiters, "1", waiter).Error(); err != nil {
		t.Fatal(err)
	}
	d := deployment{name: "single", url: "redis://ops:s3cret@" + node.Addr}
	r := inspectJSON(t, ctx, d, prefix, "m")
	if len(r.MutexWaiters) != 1 || r.MutexWaiters[0].Field != waiter || r.MutexWaiters[0].Stale {
		t.Fatalf("mutex_waiters %+v, want the waiter listed, not judged", r.MutexWaiters)
	}
}
