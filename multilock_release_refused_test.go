package scriptlock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestMultiLockUnlockAgainAfterRefusal: members refuse a MultiLock's release
// (an ACL user without the locks' channels: NO_PUBLISH, nothing changed) and
// stay held. Unlock says so, and an Unlock again with the same context, once
// the user may publish, releases those members, as a RedLock's does; it
// answered ErrNotHeld ("already unlocked") while they were still held. A
// member released the first time is not asked again: a hold its owner took
// of it since stays.
func TestMultiLockUnlockAgainAfterRefusal(t *testing.T) {
	t.Parallel()
	n, _, app := newNoChannelClients(t)
	ctx := testCtx(t, 30*time.Second)
	a, c := mustMutex(t, app, "a"), mustMutex(t, app, "c")
	b := mustLean(t, app, "b") // its release publishes nothing: never refused
	ml := mustMulti(t, []Locker{a, b, c})
	lctx, err := ml.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	err = ml.Unlock(lctx)
	if !errors.Is(err, generated.ErrNoPublish) {
		t.Fatalf("Unlock by a user without the channels: %v, want generated.ErrNoPublish", err)
	}
	if errors.Is(err, ErrNotHeld) {
		t.Fatalf("Unlock refused by the members that were held answered ErrNotHeld: %v", err)
	}
	if !strings.Contains(err.Error(), "Unlock again") {
		t.Errorf("the refused Unlock's error does not say how the members are released: %v", err)
	}
	t.Log(err)
	for _, k := range []string{a.Key(), c.Key()} {
		if got, _ := n.Do(t, "EXISTS", k).AsInt64(); got != 1 {
			t.Fatalf("%s: Unlock refused, yet the lock is gone", k)
		}
	}
	if got, _ := n.Do(t, "EXISTS", b.Key()).AsInt64(); got != 0 {
		t.Fatalf("the member whose release was not refused is still held")
	}
	// The owner takes the member released the first time anew.
	bctx, err := b.Lock(WithOwner(ctx, ownerIn(lctx)))
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Do(t, "ACL", "SETUSER", "app", "allchannels").Error(); err != nil {
		t.Fatal(err)
	}
	if err := ml.Unlock(lctx); err != nil {
		t.Fatalf("Unlock again once the user may publish: %v", err)
	}
	for _, k := range []string{a.Key(), c.Key()} {
		if got, _ := n.Do(t, "EXISTS", k).AsInt64(); got != 0 {
			t.Errorf("%s: still held after Unlock again", k)
		}
	}
	if got, _ := n.Do(t, "EXISTS", b.Key()).AsInt64(); got != 1 || bctx.Err() != nil {
		t.Errorf("Unlock again gave up the hold the owner took of a member released the first time (exists %d, context %v)", got, context.Cause(bctx))
	}
	if err := ml.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
		t.Errorf("a third Unlock: %v, want ErrNotHeld", err)
	}
	if err := b.Unlock(bctx); err != nil {
		t.Errorf("the member's own hold: Unlock: %v", err)
	}
}

// TestMultiLockUnlockAgainRedLockMember: a RedLock member whose nodes refuse
// the release is asked again by the MultiLock's Unlock made again, which
// asks those nodes again (see TestRedLockUnlockAgainAfterRefusal).
func TestMultiLockUnlockAgainRedLockMember(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := noChannelClients(t, nodes)
	r, err := NewRedLock("red", cs, WithNodeTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	m := mustMutex(t, cs[0], "plain")
	ml := mustMulti(t, []Locker{m, r})
	ctx := testCtx(t, 30*time.Second)
	lctx, err := ml.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := ml.Unlock(lctx); !errors.Is(err, generated.ErrNoPublish) || errors.Is(err, ErrNotHeld) {
		t.Fatalf("Unlock by a user without the channels: %v, want generated.ErrNoPublish", err)
	}
	allowChannels(t, nodes...)
	if err := ml.Unlock(lctx); err != nil {
		t.Fatalf("Unlock again once the user may publish: %v", err)
	}
	if got, _ := nodes[0].Do(t, "EXISTS", m.Key()).AsInt64(); got != 0 {
		t.Errorf("%s: still held after Unlock again", m.Key())
	}
	for i, n := range nodes {
		if got, _ := n.Do(t, "EXISTS", r.nodes[i].Key()).AsInt64(); got != 0 {
			t.Errorf("node %d: the RedLock member is still held after Unlock again", i)
		}
	}
	if err := ml.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
		t.Errorf("a third Unlock: %v, want ErrNotHeld", err)
	}
}
