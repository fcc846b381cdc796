package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A Mutex or FairMutex hold and an RWMutex read hold of one owner on one name
// share the lock-hash field (<client-id>:<owner-id>), but a name is held as
// one kind at a time. An Unlock or Extend of one kind, given a context that
// only names the owner (WithOwner), while the owner holds the name as the
// other kind, holds nothing of its kind: ErrNotHeld, and neither the lock on
// the server nor the owner's hold and its context change.
func TestUnlockOfAnotherKindOnOneName(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 20*time.Second)
	owner := WithOwner(ctx, "job-7")
	type unlocker struct {
		name   string
		unlock func(context.Context) error
		extend func(context.Context, time.Duration) error
	}
	exclusive := func(name string) []unlocker {
		m, f := mustMutex(t, c, name), mustFair(t, c, name)
		return []unlocker{
			{"Mutex.Unlock", m.Unlock, func(l context.Context, d time.Duration) error { return m.Extend(ctx, l, d) }},
			{"FairMutex.Unlock", f.Unlock, func(l context.Context, d time.Duration) error { return f.Extend(ctx, l, d) }},
		}
	}
	check := func(what string, key string, lctx context.Context, others []unlocker) {
		t.Helper()
		before, err := node.Do(t, "HGETALL", key).AsStrMap()
		if err != nil || len(before) == 0 {
			t.Fatalf("%s: lock %v, %v", what, before, err)
		}
		for _, o := range others {
			if err := o.extend(owner, 5*time.Second); !errors.Is(err, ErrNotHeld) {
				t.Errorf("%s: %s's Extend = %v, want ErrNotHeld", what, o.name, err)
			}
			if err := o.unlock(owner); !errors.Is(err, ErrNotHeld) {
				t.Errorf("%s: %s = %v, want ErrNotHeld", what, o.name, err)
			}
			after, _ := node.Do(t, "HGETALL", key).AsStrMap()
			if len(after) != len(before) {
				t.Errorf("%s: %s changed the lock: %v, was %v", what, o.name, after, before)
			}
			if lctx.Err() != nil {
				t.Fatalf("%s: %s ended the owner's hold: %v", what, o.name, context.Cause(lctx))
			}
		}
	}

	// The owner holds a Mutex (a FairMutex): an RWMutex read release holds nothing.
	rw := mustRW(t, c, "other-kind-a")
	m := mustMutex(t, c, "other-kind-a")
	lctx, err := m.LockWithLease(owner, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	check("Mutex held", m.Key(), lctx, []unlocker{
		{"RWMutex.RUnlock", rw.RUnlock, func(l context.Context, d time.Duration) error { return rw.RExtend(ctx, l, d) }},
	})
	if err := m.Unlock(lctx); err != nil {
		t.Fatal(err)
	}

	// The owner reads an RWMutex: a Mutex or FairMutex release holds nothing.
	rw = mustRW(t, c, "other-kind-b")
	rctx, err := rw.RLockWithLease(owner, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	check("RWMutex read", rw.Key(), rctx, exclusive("other-kind-b"))
	if err := rw.RUnlock(rctx); err != nil {
		t.Fatal(err)
	}
}
