package main

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/layout"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A user the server refuses PUBSUB SHARDNUMSUB (but not NUMSUB) cannot tell
// whether a Client listening on sharded pub/sub hears its wake channel: its
// waiter is listed, not judged stale, as when PUBSUB is refused whole.
func TestStaleMutexWaitersWithoutShardNumsub(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t, redistest.WithArgs("--user", "ops", "on", ">s3cret", "~*", "&*", "+@all", "-pubsub|shardnumsub"))
	ctx := testCtx(t, 20*time.Second)
	prefix := redistest.Prefix(t)
	rc := node.Client(t)
	holder := newClient(t, rc, prefix)
	heldMutex(t, ctx, holder, "m", "holder")
	// A live waiter whose Client listens on sharded pub/sub.
	waiter := newClient(t, rc, prefix, scriptlock.WithShardedPubSub(true), scriptlock.WithWaiterTimeout(time.Minute))
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _, _ = mustMutex(t, waiter, "m").Lock(scriptlock.WithOwner(wctx, "waiter")) }()
	k := layout.For(prefix+"m", false)
	waitFor(t, ctx, func() bool {
		n, _ := rc.Do(ctx, rc.B().Zcard().Key(k.LockWaiters).Build()).AsInt64()
		return n == 1
	})
	d := deployment{name: "single", url: "redis://ops:s3cret@" + node.Addr}
	r := inspectJSON(t, ctx, d, prefix, "m")
	if len(r.MutexWaiters) != 1 || r.MutexWaiters[0].Stale {
		t.Fatalf("mutex_waiters %+v, want the live waiter listed, not judged stale", r.MutexWaiters)
	}
}
