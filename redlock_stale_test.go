package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An Unlock made again with the context of a hold already released (a
// deferred Unlock after an explicit one) must not release a newer hold the
// same owner took since: the newer hold stays on every node, and its context
// stays live only while it is held.
func TestRedLockStaleUnlockKeepsNewerHold(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	ctx := testCtx(t, 30*time.Second)
	r := mustRedLock(t, "job", cs, WithNodeTimeout(time.Second))
	octx := WithOwner(ctx, "worker")
	l1, err := r.Lock(octx)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Unlock(l1); err != nil {
		t.Fatal(err)
	}
	l2, err := r.Lock(octx)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Unlock(l1); !errors.Is(err, ErrNotHeld) {
		t.Errorf("second Unlock of the released hold: %v, want ErrNotHeld", err)
	}
	if h := heldOn(t, r, nodes, 0, 1, 2); !h[0] || !h[1] || !h[2] {
		t.Fatalf("newer hold after a stale Unlock: held = %v, want all three (its context ended: %v)", h, l2.Err())
	}
	if err := r.Unlock(l2); err != nil {
		t.Fatal(err)
	}
}
