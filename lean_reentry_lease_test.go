package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A LeanMutex Lock of an owner that holds it already is refused with
// ErrNotReentrant and leaves the lock as it was: the owner's hold keeps its
// lease, its context does not end at the refused attempt's shorter lease,
// and nothing gives its key back.
func TestLeanRefusedReentryKeepsHoldsLease(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	l := mustLean(t, c, "lean-reentry-lease")
	ctx := testCtx(t, 20*time.Second)
	owner := WithOwner(ctx, "worker")
	lctx, err := l.LockWithLease(owner, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock(lctx)
	if _, err := l.TryLockWithLease(owner, 0, 200*time.Millisecond); !errors.Is(err, ErrNotReentrant) {
		t.Fatalf("locking again: %v, want ErrNotReentrant", err)
	}
	time.Sleep(800 * time.Millisecond)
	if err := lctx.Err(); err != nil {
		t.Fatalf("the hold ended after a refused re-entry with a shorter lease: %v", context.Cause(lctx))
	}
	if n, _ := node.Do(t, "EXISTS", l.key).AsInt64(); n != 1 {
		t.Fatal("the owner's key is gone after a refused re-entry")
	}
}
