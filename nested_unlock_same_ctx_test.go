package scriptlock

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestNestedUnlockSameContext: nested code re-enters with the lock context
// it was given and unlocks with that same context, and so does the code
// around it: Unlock is by owner, whichever of the owner's lock contexts is
// passed, so both Unlocks answer nil and the second frees the lock, for
// every re-entrant kind.
func TestNestedUnlockSameContext(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	for _, mk := range unlockAgainKinds(t, c) {
		k := mk()
		t.Run(k.name, func(t *testing.T) {
			ctx := testCtx(t, 20*time.Second)
			octx := WithOwner(ctx, "owner-"+k.name)
			lctx, err := k.lock(octx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := k.lock(lctx); err != nil { // the nested code's re-entry
				t.Fatal(err)
			}
			if err := k.unlock(lctx); err != nil {
				t.Fatalf("nested Unlock: %v", err)
			}
			if n, err := k.holds(octx); err != nil || n != 1 {
				t.Fatalf("owner's holds after the nested Unlock: %d, %v; want 1", n, err)
			}
			if err := k.unlock(lctx); err != nil {
				t.Fatalf("outer Unlock with the same context: %v", err)
			}
			if n, err := k.holds(octx); err != nil || n != 0 {
				t.Fatalf("owner's holds after the outer Unlock: %d, %v; want 0", n, err)
			}
			if exists(t, node, k.key) {
				t.Fatalf("%s still exists after the outer Unlock", k.key)
			}
			// Nor is a queue or a read lease of it left; the fence counter
			// and the release latches (which expire) stay by design.
			keys, err := node.Do(t, "KEYS", "*").AsStrSlice()
			if err != nil {
				t.Fatal(err)
			}
			for _, key := range keys {
				if strings.Contains(key, k.key+"}") && !strings.HasPrefix(key, "redisson_lock_token:") && !strings.HasPrefix(key, "redisson_unlock_latch:") {
					t.Errorf("%s left after the outer Unlock", key)
				}
			}
		})
	}
}

// reentrantKind is a lock kind whose owner can hold it twice, for the
// tests of an Unlock again.
type reentrantKind struct {
	name   string
	lock   func(ctx context.Context) (context.Context, error)
	unlock func(ctx context.Context) error
	holds  func(ctx context.Context) (int64, error) // the owner's holds on the server
	key    string
}

func unlockAgainKinds(t *testing.T, c *Client) []func() reentrantKind {
	return []func() reentrantKind{
		func() reentrantKind {
			m := mustMutex(t, c, "m")
			return reentrantKind{"Mutex", func(ctx context.Context) (context.Context, error) { return m.Lock(ctx) }, m.Unlock,
				func(ctx context.Context) (int64, error) { st, err := m.State(ctx); return st.HoldCount, err }, m.Key()}
		},
		func() reentrantKind {
			f := mustFair(t, c, "f")
			return reentrantKind{"FairMutex", func(ctx context.Context) (context.Context, error) { return f.Lock(ctx) }, f.Unlock,
				func(ctx context.Context) (int64, error) { st, err := f.State(ctx); return st.HoldCount, err }, f.Key()}
		},
		func() reentrantKind {
			rw := mustRW(t, c, "w")
			return reentrantKind{"RWMutex write", func(ctx context.Context) (context.Context, error) { return rw.Lock(ctx) }, rw.Unlock,
				func(ctx context.Context) (int64, error) { st, err := rw.State(ctx); return st.Writes, err }, rw.Key()}
		},
		func() reentrantKind {
			rw := mustRW(t, c, "r")
			return reentrantKind{"RWMutex read", func(ctx context.Context) (context.Context, error) { return rw.RLock(ctx) }, rw.RUnlock,
				func(ctx context.Context) (int64, error) { st, err := rw.State(ctx); return st.Reads, err }, rw.Key()}
		},
	}
}
