package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A ForceUnlock by this Client deletes a lock whose grant to a Lock of this
// Client is on its way back: the Lock must not return a lock context that
// lives on while another owner holds the lock.
func TestForceUnlockDuringGrantInFlight(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	other := newTestClient(t, node.Client(t), WithKeyPrefix(c.cfg.prefix))
	m, om := mustMutex(t, c, "force-inflight"), mustMutex(t, other, "force-inflight")
	ctx := testCtx(t, 20*time.Second)
	var forced bool
	var ferr error
	c.setGrantHook(func() {
		c.setGrantHook(nil)
		forced, ferr = m.ForceUnlock(ctx)
	})
	defer func() { c.setGrantHook(nil) }()
	lctx, err := m.Lock(ctx)
	if ferr != nil || !forced {
		t.Fatalf("ForceUnlock = %v, %v", forced, ferr)
	}
	if err != nil {
		return // refused: fine
	}
	octx, err := om.TryLock(ctx, 0)
	if err != nil {
		return
	}
	defer om.Unlock(octx)
	if lctx.Err() == nil {
		t.Fatal("another owner holds the lock while the lock context of a Lock whose grant was force-unlocked is alive")
	}
	_ = context.Cause(lctx)
}
