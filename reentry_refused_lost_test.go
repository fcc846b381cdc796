package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A shared owner's re-entry of a Mutex is refused: another owner holds the
// lock, so the owner's hold is gone on the server (one owner's field at a
// time). The owner's live hold must end with ErrLockLost then, not keep its
// context until its next renewal finds out.
func TestRefusedReentryEndsOwnersHold(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	other := mustMutex(t, newTestClient(t, node.Client(t), WithKeyPrefix(c.cfg.prefix)), "refused-reentry")
	m := mustMutex(t, c, "refused-reentry")
	ctx := WithOwner(testCtx(t, 20*time.Second), "job-7")
	lctx, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	node.Do(t, "DEL", m.key) // the server lost the hold (a failover, say)
	octx, err := other.TryLock(testCtx(t, 5*time.Second), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Unlock(octx)
	if _, err := m.TryLock(ctx, 0); err == nil {
		t.Fatal("the re-entry was granted while another owner holds the lock")
	}
	select {
	case <-lctx.Done():
	case <-time.After(time.Second):
		t.Fatal("the owner's hold lives on after its re-entry was refused by another owner's hold")
	}
	if cause := context.Cause(lctx); !errors.Is(cause, ErrLockLost) {
		t.Fatalf("cause = %v, want ErrLockLost", cause)
	}
	if err := m.Unlock(lctx); !errors.Is(err, ErrLockLost) && !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Unlock of the lost hold = %v", err)
	}
}
