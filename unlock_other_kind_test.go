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

// An RWMutex read release that reaches a hash without a mode (a Mutex's,
// FairMutex's or Redisson RLock's lock, whose owner field has the form of a
// reader's) holds nothing there: ErrNotHeld, and the lock stays as it was.
// Here the Client knows no hold of the owner (one it dropped, say), so the
// release is decided on the server.
func TestRWReadReleaseLeavesMutexHash(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	rw := mustRW(t, c, "read-release-mutex-hash")
	node.Do(t, "HSET", rw.Key(), c.id+":job-7", "1")
	node.Do(t, "PEXPIRE", rw.Key(), "10000")
	if err := rw.RUnlock(WithOwner(ctx, "job-7")); !errors.Is(err, ErrNotHeld) {
		t.Errorf("RUnlock = %v, want ErrNotHeld", err)
	}
	if got, _ := node.Do(t, "HGETALL", rw.Key()).AsStrMap(); got[c.id+":job-7"] != "1" || len(got) != 1 {
		t.Fatalf("the Mutex's lock is now %v", got)
	}
}

// A FairMutex release (either queue protocol) that reaches a read-write
// lock's hash, where a reader's field has the form of the owner's, holds
// nothing there: ErrNotHeld, and the read lock stays as it was. Here the
// Client knows no hold of the owner, so the release is decided on the server.
func TestFairReleaseLeavesReadWriteHash(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	for _, redisson := range []bool{false, true} {
		var opts []LockOption
		if redisson {
			opts = append(opts, WithRedissonFairQueue(0))
		}
		f := mustFair(t, c, "fair-release-rw-hash", opts...)
		node.Do(t, "HSET", f.Key(), "mode", "read", c.id+":job-7", "1")
		node.Do(t, "PEXPIRE", f.Key(), "10000")
		if err := f.Unlock(WithOwner(ctx, "job-7")); !errors.Is(err, ErrNotHeld) {
			t.Errorf("redisson=%v: Unlock = %v, want ErrNotHeld", redisson, err)
		}
		if got, _ := node.Do(t, "HGETALL", f.Key()).AsStrMap(); got[c.id+":job-7"] != "1" || len(got) != 2 {
			t.Fatalf("redisson=%v: the read lock is now %v", redisson, got)
		}
		node.Do(t, "DEL", f.Key())
	}
}

// A Mutex release that reaches a read-write lock's hash, where a reader's
// field has the form of the owner's, holds nothing there: ErrNotHeld, and the
// read lock stays as it was. Here the Client knows no hold of the owner, so
// the release is decided on the server.
func TestMutexReleaseLeavesReadWriteHash(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	m := mustMutex(t, c, "mutex-release-rw-hash")
	node.Do(t, "HSET", m.Key(), "mode", "read", c.id+":job-7", "1")
	node.Do(t, "PEXPIRE", m.Key(), "10000")
	if err := m.Unlock(WithOwner(ctx, "job-7")); !errors.Is(err, ErrNotHeld) {
		t.Errorf("Unlock = %v, want ErrNotHeld", err)
	}
	if got, _ := node.Do(t, "HGETALL", m.Key()).AsStrMap(); got[c.id+":job-7"] != "1" || len(got) != 2 {
		t.Fatalf("the read lock is now %v", got)
	}
}
