package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Unlock given a context that only names the owner (WithOwner) while the
// owner holds the lock more than once gives back the owner's most recent
// hold, as a RedLock's and a MultiLock's do: that hold's context ends, the
// earlier ones live on, and a hold re-entered and released by owner many
// times does not pile up contexts.
func TestUnlockByOwnerEndsLatestHold(t *testing.T) {
	t.Parallel()
	eachReentrantKind(t, "owner-latest-", func(t *testing.T, l Locker) {
		octx := WithOwner(testCtx(t, 30*time.Second), "job")
		outer, err := l.Lock(octx)
		if err != nil {
			t.Fatal(err)
		}
		var inner context.Context
		for range 50 {
			if inner, err = l.Lock(octx); err != nil {
				t.Fatal(err)
			}
			if err := l.Unlock(octx); err != nil {
				t.Fatal(err)
			}
		}
		if inner.Err() == nil {
			t.Errorf("the context of the hold Unlock(WithOwner) gave back is still live")
		}
		if outer.Err() != nil {
			t.Errorf("the owner's first hold ended with an Unlock of a later one: %v", context.Cause(outer))
		}
		if n, ok := trackedContexts(outer); ok && n != 1 {
			t.Errorf("the hold tracks %d contexts after 50 re-entries each released by owner, want 1", n)
		}
		if err := l.Unlock(outer); err != nil {
			t.Fatal(err)
		}
	})
}

// eachReentrantKind runs test as a subtest for each kind of lock an owner
// may hold more than once (Mutex, FairMutex, an RWMutex's write and read
// locks), the lock named prefix and the kind, on a Client of a server of
// its own.
func eachReentrantKind(t *testing.T, prefix string, test func(t *testing.T, l Locker)) {
	t.Helper()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	for _, kind := range []string{"Mutex", "FairMutex", "Write", "Read"} {
		t.Run(kind, func(t *testing.T) {
			var l Locker
			switch kind {
			case "Mutex":
				l = mustMutex(t, c, prefix+kind)
			case "FairMutex":
				l = mustFair(t, c, prefix+kind)
			case "Write":
				l = mustRW(t, c, prefix+kind)
			default:
				l = rwRead{mustRW(t, c, prefix+kind)}
			}
			test(t, l)
		})
	}
}

// trackedContexts is how many contexts the hold lctx is a context of
// tracks, and false when lctx has no hold of its own.
func trackedContexts(lctx context.Context) (int, bool) {
	h := lctx.Value(lockCtxKey{}).(*lockCtx).hold
	if h == nil {
		return 0, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.ctxs), true
}
