package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestWithOwnerScopedToClient: an owner id named with WithOwner is an owner
// of its Client only. The same Client re-enters and releases with a fresh
// WithOwner context; another Client naming the same id is another owner: it
// neither re-enters nor releases the hold.
func TestWithOwnerScopedToClient(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	a := newTestClient(t, node.Client(t), prefix)
	b := newTestClient(t, node.Client(t), prefix)
	ctx := testCtx(t, 10*time.Second)
	ma, mb := mustMutex(t, a, "owner-scope"), mustMutex(t, b, "owner-scope")

	if _, err := ma.Lock(WithOwner(ctx, "job-7")); err != nil {
		t.Fatal(err)
	}
	if _, err := ma.TryLock(WithOwner(ctx, "job-7"), 0); err != nil {
		t.Fatalf("same Client, same owner id: %v, want a re-entry", err)
	}
	if _, err := mb.TryLock(WithOwner(ctx, "job-7"), 0); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("another Client, same owner id: %v, want ErrNotAcquired", err)
	}
	if err := mb.Unlock(WithOwner(ctx, "job-7")); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Unlock on another Client, same owner id: %v, want ErrNotHeld", err)
	}
	for i := range 2 {
		if err := ma.Unlock(WithOwner(ctx, "job-7")); err != nil {
			t.Fatalf("Unlock %d with a fresh WithOwner context: %v", i+1, err)
		}
	}
	if locked, err := ma.IsLocked(ctx); err != nil || locked {
		t.Fatalf("after both Unlocks: locked %v, %v", locked, err)
	}
}
