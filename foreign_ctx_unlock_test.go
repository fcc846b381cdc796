package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A lock context of one Client given to another Client's handle of the same
// name names an owner of the first Client: to the second, whose owners are
// its own (<client-id>:<owner-id>), it is a non-owner's. Unlock and Extend
// get ErrNotHeld and change nothing, neither on the server nor in the first
// Client's hold (its context, its renewal).
func TestUnlockWithAnotherClientsLockContext(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	a := newTestClient(t, node.Client(t), prefix)
	b := newTestClient(t, node.Client(t), prefix)
	ctx := testCtx(t, 30*time.Second)
	type kind struct {
		name   string
		lock   func(*Client) (func(context.Context) (context.Context, error), func(context.Context) error, Extender)
		locked func() bool
	}
	var key string
	locked := func() bool {
		n, err := node.Do(t, "EXISTS", key).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	kinds := []kind{
		{"mutex", func(c *Client) (func(context.Context) (context.Context, error), func(context.Context) error, Extender) {
			m := mustMutex(t, c, "foreign-ctx-mutex")
			key = m.Key()
			return func(ctx context.Context) (context.Context, error) { return m.LockWithLease(ctx, 20*time.Second) }, m.Unlock, m
		}, locked},
		{"fair", func(c *Client) (func(context.Context) (context.Context, error), func(context.Context) error, Extender) {
			f := mustFair(t, c, "foreign-ctx-fair")
			key = f.Key()
			return func(ctx context.Context) (context.Context, error) { return f.LockWithLease(ctx, 20*time.Second) }, f.Unlock, f
		}, locked},
		{"rw-write", func(c *Client) (func(context.Context) (context.Context, error), func(context.Context) error, Extender) {
			rw := mustRW(t, c, "foreign-ctx-rw-w")
			key = rw.Key()
			return func(ctx context.Context) (context.Context, error) { return rw.LockWithLease(ctx, 20*time.Second) }, rw.Unlock, rw
		}, locked},
		{"rw-read", func(c *Client) (func(context.Context) (context.Context, error), func(context.Context) error, Extender) {
			rw := mustRW(t, c, "foreign-ctx-rw-r")
			key = rw.Key()
			return func(ctx context.Context) (context.Context, error) { return rw.RLockWithLease(ctx, 20*time.Second) }, rw.RUnlock, rw.RLocker().(Extender)
		}, locked},
	}
	for _, k := range kinds {
		_, otherUnlock, otherExt := k.lock(b)
		lock, unlock, _ := k.lock(a)
		lctx, err := lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := otherExt.Extend(ctx, lctx, 5*time.Second); !errors.Is(err, ErrNotHeld) {
			t.Errorf("%s: another Client's Extend of the lock context = %v, want ErrNotHeld", k.name, err)
		}
		if err := otherUnlock(lctx); !errors.Is(err, ErrNotHeld) {
			t.Errorf("%s: another Client's Unlock of the lock context = %v, want ErrNotHeld", k.name, err)
		}
		if !k.locked() {
			t.Errorf("%s: the lock is gone after another Client's Unlock", k.name)
		}
		if err := lctx.Err(); err != nil {
			t.Errorf("%s: the holder's context ended: %v", k.name, context.Cause(lctx))
		}
		if err := unlock(lctx); err != nil {
			t.Errorf("%s: the holder's Unlock = %v", k.name, err)
		}
	}
}
