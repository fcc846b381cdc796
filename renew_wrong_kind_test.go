package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A renewal that finds the lock's name taken by another kind of lock (its
// key deleted by a ForceUnlock elsewhere, then taken as a Mutex's hash, or
// the reverse) finds the hold gone: Redis answers WRONGTYPE, which no retry
// changes, and the hold's context ends at that renewal with ErrLockLost, as
// when another owner of the same kind took it, not at its loss deadline
// while the other lock's owner runs.
func TestRenewalFindsOtherKindLost(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	const lease, every = 3 * time.Second, 200 * time.Millisecond
	prefix := sharedPrefix(t)
	a := newTestClient(t, node.Client(t), prefix, WithWatchdog(lease, every))
	b := newTestClient(t, node.Client(t), prefix)
	ctx := testCtx(t, 30*time.Second)
	for _, tc := range []struct {
		name        string
		take, other func(name string) Locker
	}{
		{"lean-then-mutex", func(n string) Locker { return mustLean(t, a, n) }, func(n string) Locker { return mustMutex(t, b, n) }},
		{"mutex-then-lean", func(n string) Locker { return mustMutex(t, a, n) }, func(n string) Locker { return mustLean(t, b, n) }},
		{"write-then-lean", func(n string) Locker { return mustRW(t, a, n) }, func(n string) Locker { return mustLean(t, b, n) }},
		{"read-then-lean", func(n string) Locker { return mustRW(t, a, n).RLocker() }, func(n string) Locker { return mustLean(t, b, n) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			held := tc.take(tc.name)
			lctx, err := held.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// Another process deletes the lock and takes the name as
			// another kind of lock.
			other := tc.other(tc.name)
			if _, err := other.(interface {
				ForceUnlock(context.Context) (bool, error)
			}).ForceUnlock(ctx); !errors.Is(err, ErrWrongKind) {
				t.Fatalf("ForceUnlock of another kind's lock: %v, want ErrWrongKind", err)
			}
			// A plain DEL, as an operator's or the other kind's own
			// force-unlock would.
			if err := node.Do(t, "DEL", other.(interface{ Key() string }).Key()).Error(); err != nil {
				t.Fatal(err)
			}
			octx, err := other.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			taken := time.Now()
			select {
			case <-lctx.Done():
			case <-time.After(lease):
				t.Fatalf("the hold's context still runs %s after another kind of lock took its name", lease)
			}
			if d := time.Since(taken); d > 5*every {
				t.Errorf("the hold's context ended %s after another kind of lock took its name, want within a few renewals (every %s)", d, every)
			}
			if cause := context.Cause(lctx); !errors.Is(cause, ErrLockLost) {
				t.Errorf("cause %v, want ErrLockLost", cause)
			}
			if err := other.Unlock(octx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Extend of a hold whose name another kind of lock took (its key deleted
// elsewhere) finds it gone: the error is ErrWrongKind and ErrNotHeld, and
// the hold's context ends at once with ErrLockLost, as for a hold another
// owner took; it ran on to the new lease's loss deadline.
func TestExtendFindsOtherKindLost(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	a := newTestClient(t, node.Client(t), prefix)
	b := newTestClient(t, node.Client(t), prefix)
	ctx := testCtx(t, 30*time.Second)
	for _, tc := range []struct {
		name  string
		take  func(name string) Extender
		other func(name string) Locker
	}{
		{"lean-then-mutex", func(n string) Extender { return mustLean(t, a, n) }, func(n string) Locker { return mustMutex(t, b, n) }},
		{"mutex-then-lean", func(n string) Extender { return mustMutex(t, a, n) }, func(n string) Locker { return mustLean(t, b, n) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			held := tc.take(tc.name)
			lctx, err := held.(interface {
				LockWithLease(context.Context, time.Duration) (context.Context, error)
			}).LockWithLease(ctx, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if err := node.Do(t, "DEL", held.(interface{ Key() string }).Key()).Error(); err != nil {
				t.Fatal(err)
			}
			octx, err := tc.other(tc.name).Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			err = held.Extend(ctx, lctx, 10*time.Second)
			if !errors.Is(err, ErrWrongKind) || !errors.Is(err, ErrNotHeld) {
				t.Errorf("Extend of a hold whose name another kind of lock took: %v, want ErrWrongKind and ErrNotHeld", err)
			}
			if cause := context.Cause(lctx); !errors.Is(cause, ErrLockLost) {
				t.Errorf("after Extend found another kind of lock: the hold's context cause %v, want ErrLockLost", cause)
			}
			if err := tc.other(tc.name).Unlock(octx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
