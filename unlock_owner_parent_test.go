package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Unlock given a context that only names the owner gives back the owner's
// most recent hold. When that hold's context already ended with its parent
// (a request that was over), it is still the hold given back: the context of
// an earlier hold, which lives on under the lock still held, must not end in
// its place.
func TestUnlockByOwnerAfterParentEnded(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	for _, kind := range []string{"Mutex", "FairMutex", "Write", "Read"} {
		t.Run(kind, func(t *testing.T) {
			var l Locker
			switch kind {
			case "Mutex":
				l = mustMutex(t, c, "owner-parent-"+kind)
			case "FairMutex":
				l = mustFair(t, c, "owner-parent-"+kind)
			case "Write":
				l = mustRW(t, c, "owner-parent-"+kind)
			default:
				l = rwRead{mustRW(t, c, "owner-parent-"+kind)}
			}
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
			if h := outer.Value(lockCtxKey{}).(*lockCtx).hold; h != nil {
				h.mu.Lock()
				n := len(h.ctxs)
				h.mu.Unlock()
				if n != 1 {
					t.Errorf("the hold tracks %d contexts after the re-entry was given back, want 1", n)
				}
			}
			if err := l.Unlock(outer); err != nil {
				t.Fatal(err)
			}
		})
	}
}
