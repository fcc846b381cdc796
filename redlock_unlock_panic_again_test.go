package scriptlock

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// panicFirstRelease is an Observer whose first ReleaseStart panics.
type panicFirstRelease struct {
	NopObserver
	first atomic.Bool
}

func (o *panicFirstRelease) ReleaseStart(ctx context.Context, _ Op) context.Context {
	if o.first.CompareAndSwap(false, true) {
		panic("observer panicked")
	}
	return ctx
}

// TestRedLockUnlockAgainAfterPanic: an Unlock whose nodes refuse the
// release (NO_PUBLISH) and an Observer's ReleaseStart panics keeps those
// nodes for an Unlock again, as one without the panic does: the panic
// reaches the caller, and the Unlock again, once the user may publish,
// releases them. The panic skipped the keeping: the Unlock again answered
// ErrNotHeld ("already unlocked") while every node held the lock.
func TestRedLockUnlockAgainAfterPanic(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	obs := &panicFirstRelease{}
	cs := noChannelClients(t, nodes, WithObserver(obs))
	r := mustRedLock(t, "unlock-panic-again", cs, WithNodeTimeout(time.Second))
	ctx := testCtx(t, 30*time.Second)
	lctx, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if v := recover(); v == nil {
				t.Fatal("Unlock did not pass the Observer's panic on")
			}
		}()
		_ = r.Unlock(lctx)
	}()
	for i, n := range nodes {
		if got, _ := n.Do(t, "EXISTS", r.nodes[i].Key()).AsInt64(); got != 1 {
			t.Fatalf("node %d: every release was refused, yet the lock is gone", i)
		}
	}
	allowChannels(t, nodes...)
	if err := r.Unlock(lctx); err != nil {
		t.Fatalf("Unlock again once the user may publish: %v", err)
	}
	if h := heldOn(t, r, nodes, 0, 1, 2); h[0] || h[1] || h[2] {
		t.Fatalf("nodes holding the lock after Unlock again: %v", h)
	}
	if err := r.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
		t.Errorf("a third Unlock: %v, want ErrNotHeld", err)
	}
}
