package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// otherPkgLocker stands for a Locker of another package: a MultiLock over
// it cannot name the lock (lockID), and its hold is known to its own
// handle only.
type otherPkgLocker struct{ *Mutex }

// An owner that holds a lock itself and, re-entered, as a member of a
// MultiLock that is then lost (another member force-unlocked) keeps its own
// hold: the MultiLock gives back only its own hold of the member, and its
// Unlock given a context that only names the owner (WithOwner) answers the
// loss (ErrNotHeld) and changes nothing. It found no hold of the owner (a
// lost one is forgotten) and released each member by owner, which gave up
// the owner's own hold of the shared member: its context ended and the lock
// was free while the owner worked under it.
func TestMultiLockLostOwnerUnlockKeepsOwnersOtherHold(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	prefix := sharedPrefix(t)
	c := newTestClient(t, nodes[0].Client(t), prefix)
	reds := []*Client{c, newTestClient(t, nodes[1].Client(t), prefix), newTestClient(t, nodes[2].Client(t), prefix)}
	for _, kind := range []string{"Mutex", "FairMutex", "Write", "Read", "RedLock", "OtherPackage"} {
		t.Run(kind, func(t *testing.T) {
			ctx := testCtx(t, 20*time.Second)
			octx := WithOwner(ctx, "job")
			name := "lost-owner-" + kind
			var shared Locker
			switch kind {
			case "Mutex":
				shared = mustMutex(t, c, name)
			case "FairMutex":
				shared = mustFair(t, c, name)
			case "Write":
				shared = mustRW(t, c, name)
			case "Read":
				shared = mustRW(t, c, name).RLocker()
			case "RedLock":
				shared = mustRedLock(t, name, reds, WithNodeTimeout(time.Second))
			default:
				shared = otherPkgLocker{mustMutex(t, c, name)}
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
			mh := mctx.Value(ml.key).(*multiHeld)
			if _, err := other.ForceUnlock(ctx); err != nil {
				t.Fatal(err)
			}
			select {
			case <-mh.givenBack:
			case <-time.After(5 * time.Second):
				t.Fatal("the lost MultiLock did not give its members back within 5s")
			}
			if cause := context.Cause(mctx); !errors.Is(cause, ErrLockLost) {
				t.Fatalf("MultiLock context after its member was force-unlocked: %v, want ErrLockLost", cause)
			}
			if err := ml.Unlock(WithOwner(ctx, "job")); !errors.Is(err, ErrNotHeld) {
				t.Errorf("Unlock of the lost MultiLock naming only the owner: %v, want ErrNotHeld", err)
			}
			if kind != "OtherPackage" {
				// Made again over handles of the same locks, which finds
				// the holds taken through the first (a MultiLock with a
				// Locker of another package knows only its own).
				again := mustMulti(t, []Locker{shared, other})
				if err := again.Unlock(WithOwner(ctx, "job")); !errors.Is(err, ErrNotHeld) {
					t.Errorf("Unlock through another handle of the lost MultiLock naming only the owner: %v, want ErrNotHeld", err)
				}
			}
			if err := own.Err(); err != nil {
				t.Fatalf("the owner's own hold of %s ended with the lost MultiLock's Unlock: %v", name, context.Cause(own))
			}
			if err := shared.Unlock(own); err != nil {
				t.Errorf("Unlock of the owner's own hold after the MultiLock's: %v, want it held", err)
			}
		})
	}
}
