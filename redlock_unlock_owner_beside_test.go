package scriptlock

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRedLockOwnerUnlockBesideRefusedUnlock: an Unlock given a context that
// only names the owner (WithOwner), made while an Unlock with the hold's
// context is still releasing it, which the nodes then refuse (NO_PUBLISH:
// an ACL user without the lock's channels), waits for that one's outcome
// and asks the nodes it could not release again, as an Unlock with the
// hold's context made meanwhile does. It answered ErrNotHeld at once (the
// hold no longer listed, its nodes still held here), while every node went
// on holding the lock.
func TestRedLockOwnerUnlockBesideRefusedUnlock(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	prefix := sharedPrefix(t)
	cs := make([]*Client, len(nodes))
	for i, n := range nodes {
		if err := n.Do(t, "ACL", "SETUSER", "app", "on", ">pw", "~*", "resetchannels", "+@all").Error(); err != nil {
			t.Fatalf("ACL SETUSER: %v", err)
		}
		cs[i] = newTestClient(t, n.Client(t, func(o *rueidis.ClientOption) { o.Username, o.Password = "app", "pw" }), prefix)
	}
	r := mustRedLock(t, "owner-unlock-beside", cs, WithNodeTimeout(time.Second)) // every node must hold it: roomy for a loaded machine
	ctx := testCtx(t, 30*time.Second)
	owner := WithOwner(ctx, "worker-7")
	lctx, err := r.Lock(owner)
	if err != nil {
		t.Fatal(err)
	}
	started, proceed := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	r.releaseHook = func(node int) {
		if node == 0 && first.CompareAndSwap(false, true) {
			close(started)
			<-proceed
		}
	}
	firstErr := make(chan error, 1)
	go func() { firstErr <- r.Unlock(lctx) }()
	<-started
	secondErr := make(chan error, 1)
	go func() { secondErr <- r.Unlock(owner) }()
	time.Sleep(100 * time.Millisecond)
	close(proceed)
	e1, e2 := <-firstErr, <-secondErr
	if !errors.Is(e1, generated.ErrNoPublish) {
		t.Fatalf("the first Unlock: %v, want generated.ErrNoPublish", e1)
	}
	for i, n := range nodes {
		if got, _ := n.Do(t, "EXISTS", r.nodes[i].Key()).AsInt64(); got != 1 {
			t.Fatalf("node %d: every release was refused, yet the lock is gone", i)
		}
	}
	if errors.Is(e2, ErrNotHeld) {
		t.Fatalf("an Unlock by owner beside the refused one answered ErrNotHeld while every node holds the lock: %v", e2)
	}
	if !errors.Is(e2, generated.ErrNoPublish) {
		t.Fatalf("the Unlock by owner beside the refused one: %v, want generated.ErrNoPublish", e2)
	}
	for _, n := range nodes {
		if err := n.Do(t, "ACL", "SETUSER", "app", "allchannels").Error(); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Unlock(owner); err != nil {
		t.Fatalf("Unlock by owner again once the user may publish: %v", err)
	}
	if h := heldOn(t, r, nodes, 0, 1, 2); h[0] || h[1] || h[2] {
		t.Fatalf("nodes holding the lock after Unlock again: %v", h)
	}
	if err := r.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Unlock with the hold's context after the owner's: %v, want ErrNotHeld", err)
	}
}

// TestRedLockOwnerUnlockBesideStartingUnlock: an Unlock with the hold's
// context has taken the hold's unlocking, and an Unlock that only names the
// owner is made before it marks the hold unlocked; the nodes then refuse
// the release (NO_PUBLISH). The Unlock with the context releases the nodes
// and reports the refusal, and the one by owner waits for it and asks them
// again. The one by owner marked the hold unlocked first and waited for the
// other, which, finding it unlocked and nothing yet to ask again, answered
// ErrNotHeld, "already unlocked", while every node held the lock.
func TestRedLockOwnerUnlockBesideStartingUnlock(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	prefix := sharedPrefix(t)
	cs := make([]*Client, len(nodes))
	for i, n := range nodes {
		if err := n.Do(t, "ACL", "SETUSER", "app", "on", ">pw", "~*", "resetchannels", "+@all").Error(); err != nil {
			t.Fatalf("ACL SETUSER: %v", err)
		}
		cs[i] = newTestClient(t, n.Client(t, func(o *rueidis.ClientOption) { o.Username, o.Password = "app", "pw" }), prefix)
	}
	r := mustRedLock(t, "owner-unlock-beside-starting", cs, WithNodeTimeout(time.Second)) // every node must hold it: roomy for a loaded machine
	ctx := testCtx(t, 30*time.Second)
	owner := WithOwner(ctx, "worker-8")
	lctx, err := r.Lock(owner)
	if err != nil {
		t.Fatal(err)
	}
	h := lctx.Value(r.id).(*redHeld)
	secondErr := make(chan error, 1)
	var first atomic.Bool
	r.unlockHook = func() {
		if !first.CompareAndSwap(false, true) {
			return
		}
		go func() { secondErr <- r.Unlock(owner) }()
		// Until the Unlock by owner has marked the hold (it may wait for
		// this one first instead).
		for end := time.Now().Add(500 * time.Millisecond); h.state.Load() == endNone && time.Now().Before(end); {
			time.Sleep(time.Millisecond)
		}
	}
	e1 := r.Unlock(lctx)
	e2 := <-secondErr
	for i, n := range nodes {
		if got, _ := n.Do(t, "EXISTS", r.nodes[i].Key()).AsInt64(); got != 1 {
			t.Fatalf("node %d: every release was refused, yet the lock is gone", i)
		}
	}
	if errors.Is(e1, ErrNotHeld) {
		t.Fatalf("the Unlock with the hold's context answered ErrNotHeld while every node holds the lock: %v", e1)
	}
	if !errors.Is(e1, generated.ErrNoPublish) {
		t.Fatalf("the Unlock with the hold's context: %v, want generated.ErrNoPublish", e1)
	}
	if !errors.Is(e2, generated.ErrNoPublish) {
		t.Fatalf("the Unlock by owner beside it: %v, want generated.ErrNoPublish", e2)
	}
	for _, n := range nodes {
		if err := n.Do(t, "ACL", "SETUSER", "app", "allchannels").Error(); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Unlock(lctx); err != nil {
		t.Fatalf("Unlock again once the user may publish: %v", err)
	}
	if h := heldOn(t, r, nodes, 0, 1, 2); h[0] || h[1] || h[2] {
		t.Fatalf("nodes holding the lock after Unlock again: %v", h)
	}
}
