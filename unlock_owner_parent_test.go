package scriptlock

import (
	"context"
	"testing"
	"time"
)

// Unlock given a context that only names the owner gives back the owner's
// most recent hold. When that hold's context already ended with its parent
// (a request that was over), it is still the hold given back: the context of
// an earlier hold, which lives on under the lock still held, must not end in
// its place.
func TestUnlockByOwnerAfterParentEnded(t *testing.T) {
	t.Parallel()
	eachReentrantKind(t, "owner-parent-", func(t *testing.T, l Locker) {
		octx := WithOwner(testCtx(t, 30*time.Second), "job")
		outer, err := l.Lock(octx)
		if err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithCancel(octx)
		if _, err := l.Lock(rctx); err != nil {
			t.Fatal(err)
		}
		cancel() // the request of the re-entry is over
		if err := l.Unlock(octx); err != nil {
			t.Fatal(err)
		}
		if outer.Err() != nil {
			t.Errorf("the owner's first hold, still held, ended with an Unlock of the later one: %v", context.Cause(outer))
		}
		if n, ok := trackedContexts(outer); ok && n != 1 {
			t.Errorf("the hold tracks %d contexts after the re-entry was given back, want 1", n)
		}
		if err := l.Unlock(outer); err != nil {
			t.Fatal(err)
		}
	})
}
