package scriptlock

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// goexitFirstReleaseEnd is an Observer whose first ReleaseEnd ends its
// goroutine (runtime.Goexit, as a test's t.FailNow there does): after the
// release it reports went through.
type goexitFirstReleaseEnd struct {
	NopObserver
	first atomic.Bool
}

func (o *goexitFirstReleaseEnd) ReleaseEnd(context.Context, Op, ReleaseEvent) {
	if o.first.CompareAndSwap(false, true) {
		runtime.Goexit()
	}
}

// TestRedLockUnlockAgainAfterReleasedNode: a RedLock node whose release
// panicked, or ended its goroutine, after the release went through (an
// Observer's ReleaseStart or ReleaseEnd) is not kept for an Unlock again.
// Asked again, it gave up the owner's other hold there (a re-entrant Lock
// of the RedLock), which its holder still relied on, and the Unlock again
// answered nil. Unlock again answers ErrNotHeld, and the other hold stays
// on every node.
func TestRedLockUnlockAgainAfterReleasedNode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		obs  Observer
		want string
	}{
		{"ReleaseStart panics", &panicFirstRelease{}, endedPanicked},
		{"ReleaseEnd ends its goroutine", &goexitFirstReleaseEnd{}, endedGoexit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			nodes := redistest.Servers(t, 3)
			cs := redlockClients(t, nodes)
			cs[1] = newTestClient(t, nodes[1].Client(t), sharedPrefix(t), WithObserver(tc.obs))
			ctx := testCtx(t, 20*time.Second)
			r := mustRedLock(t, "released-node", cs, WithNodeTimeout(time.Second))
			outer, err := r.Lock(WithOwner(ctx, "owner-1"))
			if err != nil {
				t.Fatal(err)
			}
			inner, err := r.Lock(outer) // the owner's other hold, on every node
			if err != nil {
				t.Fatal(err)
			}
			holds := func(what string, want int64) {
				t.Helper()
				for i, m := range r.nodes {
					if st, err := m.State(WithOwner(ctx, "owner-1")); err != nil || st.HoldCount != want {
						t.Fatalf("node %d %s: %+v, %v; want %d holds of the owner", i, what, st, err, want)
					}
				}
			}
			if how := howEnded(func() { err = r.Unlock(inner) }); how != tc.want {
				t.Fatalf("Unlock whose node's Observer %s %s (%v)", tc.name, how, err)
			}
			holds("after the Unlock", 1)
			if err := r.Unlock(inner); !errors.Is(err, ErrNotHeld) {
				t.Errorf("Unlock again: %v; want ErrNotHeld, every node given back", err)
			}
			holds("after Unlock again", 1)
			if err := context.Cause(outer); err != nil {
				t.Fatalf("the other hold ended: %v", err)
			}
			if err := r.Unlock(outer); err != nil {
				t.Fatalf("the other hold's Unlock: %v", err)
			}
			if h := heldOn(t, r, nodes, 0, 1, 2); h[0] || h[1] || h[2] {
				t.Fatalf("nodes held after the other hold's Unlock: %v", h)
			}
		})
	}
}
