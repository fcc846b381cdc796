package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestMultiLockUnlockAgainAfterReleasedMember: a member whose Unlock
// panicked after its release went through (an Observer's ReleaseStart, the
// release still made) is not kept for an Unlock again: asked again, it gave
// up the owner's other hold of that lock (a re-entrant Lock of it), which
// its holder still relied on, and the Unlock again answered nil. Unlock
// again answers ErrNotHeld, and the other hold stays.
func TestMultiLockUnlockAgainAfterReleasedMember(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	plain := newTestClient(t, node.Client(t))
	bombed := newTestClient(t, node.Client(t), WithObserver(&panicFirstRelease{}))
	ctx := testCtx(t, 20*time.Second)
	a, b := mustMutex(t, plain, "a"), mustMutex(t, bombed, "b")
	ml := mustMulti(t, []Locker{a, b})
	octx := WithOwner(ctx, "owner-1")
	lctx, err := ml.Lock(octx)
	if err != nil {
		t.Fatal(err)
	}
	bctx, err := b.Lock(octx) // the owner's other hold of b
	if err != nil {
		t.Fatal(err)
	}
	if p := panicked(func() { err = ml.Unlock(lctx) }); p == nil {
		t.Fatalf("Unlock did not pass the Observer's panic on (%v)", err)
	}
	if st, err := b.State(bctx); err != nil || st.HoldCount != 1 {
		t.Fatalf("b after the Unlock that panicked: %+v, %v; want the MultiLock's hold given back, the other kept", st, err)
	}
	if err := ml.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
		t.Errorf("Unlock again: %v; want ErrNotHeld, every member given back", err)
	}
	if st, err := b.State(bctx); err != nil || st.HoldCount != 1 || context.Cause(bctx) != nil {
		t.Fatalf("b after Unlock again: %+v, %v (hold %v); want the owner's other hold still held", st, err, context.Cause(bctx))
	}
	if err := b.Unlock(bctx); err != nil {
		t.Fatalf("the other hold's Unlock: %v", err)
	}
}

// TestMultiLockUnlockAgainAfterRefusedPanic: a member whose release was
// refused (its user may not publish) while an Observer's ReleaseStart
// panicked is still kept for an Unlock again, as without the panic: its
// hold ended with the failure, not given back.
func TestMultiLockUnlockAgainAfterRefusedPanic(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 1)
	cs := noChannelClients(t, nodes, WithObserver(&panicFirstRelease{}))
	ctx := testCtx(t, 20*time.Second)
	a, b := mustMutex(t, cs[0], "a"), mustMutex(t, cs[0], "b")
	ml := mustMulti(t, []Locker{a, b})
	lctx, err := ml.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p := panicked(func() { err = ml.Unlock(lctx) }); p == nil {
		t.Fatalf("Unlock did not pass the Observer's panic on (%v)", err)
	}
	if got := lockedAll(t, ctx, a, b); !got[0] || !got[1] {
		t.Fatalf("members after releases that were refused: %v; want both held", got)
	}
	allowChannels(t, nodes...)
	if err := ml.Unlock(lctx); err != nil {
		t.Fatalf("Unlock again once the user may publish: %v", err)
	}
	if got := lockedAll(t, ctx, a, b); got[0] || got[1] {
		t.Fatalf("members held after Unlock again: %v", got)
	}
}
