package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A RedLock handle made again for the same name and nodes (as handles often
// are, per request) unlocks what another handle locked, as a Mutex does.
// Unlock through it answered nil and released nothing: the nodes stayed
// locked, renewed by their watchdogs, and the lock context stayed live.
func TestRedLockUnlockThroughAnotherHandle(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	ctx := testCtx(t, 20*time.Second)
	r := mustRedLock(t, "job", cs)
	// Every node granted: a late grant not yet undone would still be held.
	lctx := lockEveryNode(t, ctx, r)
	again := mustRedLock(t, "job", cs)
	if err := again.Unlock(lctx); err != nil {
		t.Fatalf("Unlock through another handle: %v", err)
	}
	for i, h := range heldOn(t, r, nodes, 0, 1, 2) {
		if h {
			t.Errorf("node %d still holds the lock after Unlock", i)
		}
	}
	if context.Cause(lctx) != context.Canceled {
		t.Errorf("lock context after Unlock: cause %v, want context.Canceled", context.Cause(lctx))
	}
	if err := r.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
		t.Errorf("second Unlock: %v, want ErrNotHeld", err)
	}
	// Another node order is another RedLock: its Unlock does not take
	// this one's hold for its own.
	lctx, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Unlock(lctx)
	if _, err := mustRedLock(t, "other", cs).TryLock(lctx, 0); err != nil {
		t.Fatal(err) // another name, same owner
	}
}

// Unlock given a context that only names the owner (WithOwner), as
// Locker.Unlock allows, gives back that owner's most recent hold of the
// RedLock taken here, as its own context would: the hold's context ends and
// the nodes give up one hold each. It answered nil and released nothing:
// the nodes stayed locked, renewed by their watchdogs.
func TestRedLockUnlockByOwner(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	ctx := testCtx(t, 20*time.Second)
	// Every node must take both holds for the counts checked below: with
	// the default node timeout (200 ms) a node slow under a loaded race run
	// is left out of the majority and holds one hold fewer.
	r := mustRedLock(t, "job", cs, WithNodeTimeout(5*time.Second))
	outer, err := r.Lock(WithOwner(ctx, "job-7"))
	if err != nil {
		t.Fatal(err)
	}
	inner, err := mustRedLock(t, "job", cs, WithNodeTimeout(5*time.Second)).Lock(WithOwner(ctx, "job-7")) // re-enters
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Unlock(WithOwner(ctx, "job-7")); err != nil {
		t.Fatalf("Unlock naming only the owner: %v", err)
	}
	if context.Cause(inner) != context.Canceled {
		t.Errorf("the most recent hold's context after Unlock: cause %v, want context.Canceled", context.Cause(inner))
	}
	if outer.Err() != nil {
		t.Fatalf("the earlier hold's context ended: %v", context.Cause(outer))
	}
	for i, h := range heldOn(t, r, nodes, 0, 1, 2) {
		if !h {
			t.Errorf("node %d no longer holds the lock, with one hold left", i)
		}
	}
	if err := r.Unlock(WithOwner(ctx, "job-7")); err != nil {
		t.Fatalf("second Unlock naming only the owner: %v", err)
	}
	if context.Cause(outer) != context.Canceled {
		t.Errorf("the earlier hold's context after Unlock: cause %v, want context.Canceled", context.Cause(outer))
	}
	for i, h := range heldOn(t, r, nodes, 0, 1, 2) {
		if h {
			t.Errorf("node %d still holds the lock after the owner's last Unlock", i)
		}
	}
	if err := r.Unlock(WithOwner(ctx, "job-7")); !errors.Is(err, ErrNotHeld) {
		t.Errorf("Unlock of a released lock: %v, want ErrNotHeld", err)
	}
	if err := r.Unlock(outer); !errors.Is(err, ErrNotHeld) {
		t.Errorf("Unlock through the context of a hold given back by owner: %v, want ErrNotHeld", err)
	}
}
