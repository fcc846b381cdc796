package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An Unlock whose lock's name was taken by another kind of lock (the key
// deleted elsewhere, then taken as a Mutex's hash, or the reverse) finds
// the hold gone, as when another owner took it, and as its Extend and
// renewal do: ErrNotHeld with ErrWrongKind, the hold ended as lost, not as
// a release that failed, and the other lock left alone. It answered
// ErrWrongKind alone, every time it was made, an error a caller reads as a
// failure to release rather than as a hold it no longer had.
func TestUnlockFindsNameTakenByOtherKind(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 20*time.Second)
	for _, tc := range []struct {
		name        string
		held, other func(name string) Locker
	}{
		{"lean-then-mutex", func(n string) Locker { return mustLean(t, c, n) }, func(n string) Locker { return mustMutex(t, c, n) }},
		{"fenced-lean-then-mutex", func(n string) Locker { return mustLean(t, c, n, WithFencing()) }, func(n string) Locker { return mustMutex(t, c, n) }},
		{"mutex-then-lean", func(n string) Locker { return mustMutex(t, c, n) }, func(n string) Locker { return mustLean(t, c, n) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			held, other := tc.held(tc.name), tc.other(tc.name)
			lctx, err := held.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			key := held.(interface{ Key() string }).Key()
			if err := node.Do(t, "DEL", key).Error(); err != nil {
				t.Fatal(err)
			}
			octx, err := other.Lock(WithOwner(ctx, "other"))
			if err != nil {
				t.Fatal(err)
			}
			dump, _ := node.Do(t, "DUMP", key).ToString()
			for i := range 2 {
				err := held.Unlock(lctx)
				if !errors.Is(err, ErrNotHeld) || !errors.Is(err, ErrWrongKind) {
					t.Errorf("Unlock %d of a hold whose name another kind took: %v, want ErrNotHeld and ErrWrongKind", i+1, err)
				}
			}
			if cause := context.Cause(lctx); !errors.Is(cause, ErrLockLost) || !errors.Is(cause, ErrWrongKind) {
				t.Errorf("the hold ended with %v, want ErrLockLost with ErrWrongKind", cause)
			}
			if d, _ := node.Do(t, "DUMP", key).ToString(); d != dump || octx.Err() != nil {
				t.Errorf("the other kind's lock changed (ctx %v)", context.Cause(octx))
			}
			if err := other.Unlock(octx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
