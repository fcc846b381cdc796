package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An Unlock given a context that only names the owner (WithOwner), made once
// the owner's hold of a MultiLock was given back already (unlocked, or lost
// and answered with its context), answers ErrNotHeld and releases no member,
// also for a MultiLock with a Locker of another package: releasing each
// member by owner gave up the owner's own hold of a member it had
// re-entered.
func TestMultiLockOwnerUnlockAfterGivenBackKeepsOwnersOtherHold(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, redistest.Server(t).Client(t), sharedPrefix(t))
	for _, kind := range []string{"Mutex", "OtherPackage"} {
		for _, how := range []string{"Unlocked", "LostAnswered"} {
			t.Run(kind+"/"+how, func(t *testing.T) {
				ctx := testCtx(t, 20*time.Second)
				octx := WithOwner(ctx, "job")
				name := "given-back-owner-" + kind + "-" + how
				var shared Locker = mustMutex(t, c, name)
				if kind == "OtherPackage" {
					shared = otherPkgLocker{shared.(*Mutex)}
				}
				other := mustMutex(t, c, name+"-other")
				own, err := shared.Lock(octx)
				if err != nil {
					t.Fatal(err)
				}
				ml := mustMulti(t, []Locker{shared, other})
				mctx, err := ml.Lock(octx)
				if err != nil {
					t.Fatal(err)
				}
				if how == "Unlocked" {
					if err := ml.Unlock(mctx); err != nil {
						t.Fatal(err)
					}
				} else {
					if _, err := other.ForceUnlock(ctx); err != nil {
						t.Fatal(err)
					}
					if err := ml.Unlock(mctx); !errors.Is(err, ErrNotHeld) {
						t.Fatalf("Unlock of the lost MultiLock with its context: %v, want ErrNotHeld", err)
					}
				}
				if err := ml.Unlock(WithOwner(ctx, "job")); !errors.Is(err, ErrNotHeld) {
					t.Errorf("Unlock naming only the owner after its hold was given back: %v, want ErrNotHeld", err)
				}
				if err := own.Err(); err != nil {
					t.Fatalf("the owner's own hold of %s ended with an Unlock by owner of the MultiLock given back already: %v", name, context.Cause(own))
				}
				if err := shared.Unlock(own); err != nil {
					t.Errorf("Unlock of the owner's own hold: %v, want it held", err)
				}
			})
		}
	}
}
