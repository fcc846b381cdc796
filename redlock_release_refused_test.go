package scriptlock

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRedLockUnlockAgainAfterRefusal: the nodes refuse a RedLock's release
// (an ACL user without the lock's channels: NO_PUBLISH, nothing changed),
// and the lock stays held there. Unlock says so, and an Unlock again with
// the same context, once the user may publish, releases it on those nodes,
// as a Mutex's does; it answered ErrNotHeld ("already unlocked") while
// every node still held the lock.
func TestRedLockUnlockAgainAfterRefusal(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := noChannelClients(t, nodes)
	// Every node must hold the lock (the test reads each): the default node
	// timeout, 200 ms, let a majority take it without a slow node on a
	// loaded machine.
	r, err := NewRedLock("refused", cs, WithNodeTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t, 30*time.Second)
	lctx, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	err = r.Unlock(lctx)
	if !errors.Is(err, generated.ErrNoPublish) {
		t.Fatalf("Unlock by a user without the channels: %v, want generated.ErrNoPublish", err)
	}
	if errors.Is(err, ErrNotHeld) {
		t.Fatalf("Unlock refused on every node answered ErrNotHeld: %v", err)
	}
	if !strings.Contains(err.Error(), "Unlock again") {
		t.Errorf("the refused Unlock's error does not say how the lock is released: %v", err)
	}
	t.Log(err)
	for i, n := range nodes {
		if got, _ := n.Do(t, "EXISTS", r.nodes[i].Key()).AsInt64(); got != 1 {
			t.Fatalf("node %d: Unlock refused, yet the lock is gone", i)
		}
		if err := n.Do(t, "ACL", "SETUSER", "app", "allchannels").Error(); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Unlock(lctx); err != nil {
		t.Fatalf("Unlock again once the user may publish: %v", err)
	}
	for i, n := range nodes {
		if got, _ := n.Do(t, "EXISTS", r.nodes[i].Key()).AsInt64(); got != 0 {
			t.Errorf("node %d: the lock is still held after Unlock again", i)
		}
	}
	if err := r.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
		t.Errorf("a third Unlock: %v, want ErrNotHeld", err)
	}
}
