package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An owner (WithOwner) holds a MultiLock twice, and its more recent hold is
// lost (a member's share of it released through the member's own handle)
// while the earlier one lives. Unlock given a context that only names the
// owner stands for that most recent hold: it answers ErrNotHeld and
// releases nothing, as the lost hold's own context does, and the next one
// gives back the earlier hold. It found the earlier hold (a lost one left
// the owner's holds) and gave it back, answering nil: the owner's live hold
// ended under it. Nothing is kept once the owner's holds have ended.
func TestMultiLockOwnerUnlockLatestLostKeepsEarlier(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), sharedPrefix(t))
	for _, how := range []string{"ByOwner", "ByContext", "EarlierUnlocked"} {
		t.Run(how, func(t *testing.T) {
			ctx := testCtx(t, 20*time.Second)
			name := "multi-latest-lost-" + how
			a, b := mustMutex(t, c, name+"-a"), mustMutex(t, c, name+"-b")
			ml := mustMulti(t, []Locker{a, b})
			octx := WithOwner(ctx, "job")
			outer, err := ml.Lock(octx)
			if err != nil {
				t.Fatal(err)
			}
			inner, err := ml.Lock(octx) // re-enters both members
			if err != nil {
				t.Fatal(err)
			}
			mh := inner.Value(ml.key).(*multiHeld)
			if err := a.Unlock(mh.ctxs[0]); err != nil {
				t.Fatal(err)
			}
			select {
			case <-mh.givenBack:
			case <-time.After(5 * time.Second):
				t.Fatal("the lost MultiLock hold did not give its members back within 5s")
			}
			if cause := context.Cause(inner); !errors.Is(cause, ErrLockLost) {
				t.Fatalf("the later hold's context: %v, want ErrLockLost", cause)
			}
			if err := outer.Err(); err != nil {
				t.Fatalf("the earlier hold ended with the later one's loss: %v", context.Cause(outer))
			}
			key := ownedKey[multiKey]{ml.key, "job"}
			switch how {
			case "ByOwner":
				if err := ml.Unlock(WithOwner(ctx, "job")); !errors.Is(err, ErrNotHeld) {
					t.Errorf("Unlock naming only the owner, its most recent hold lost: %v, want ErrNotHeld", err)
				}
			case "ByContext":
				if err := ml.Unlock(inner); !errors.Is(err, ErrNotHeld) {
					t.Errorf("Unlock of the lost hold with its context: %v, want ErrNotHeld", err)
				}
			default:
				if err := ml.Unlock(outer); err != nil {
					t.Fatal(err)
				}
				if n := ownedCount(&multiOwned, key); n != 0 {
					t.Errorf("%d entries kept for the owner once its holds ended", n)
				}
				return
			}
			if err := outer.Err(); err != nil {
				t.Fatalf("the owner's earlier, live hold ended with the Unlock of its lost later one: %v", context.Cause(outer))
			}
			for _, m := range []*Mutex{a, b} {
				if n, err := node.Do(t, "EXISTS", m.Key()).AsInt64(); err != nil || n != 1 {
					t.Errorf("%s with the owner's earlier hold live: exists %d, %v", m.Name(), n, err)
				}
			}
			if err := ml.Unlock(WithOwner(ctx, "job")); err != nil {
				t.Fatalf("Unlock naming only the owner, for its earlier hold: %v", err)
			}
			if cause := context.Cause(outer); cause != context.Canceled {
				t.Errorf("the earlier hold's context after Unlock by owner: %v, want context.Canceled", cause)
			}
			for _, m := range []*Mutex{a, b} {
				if n, err := node.Do(t, "EXISTS", m.Key()).AsInt64(); err != nil || n != 0 {
					t.Errorf("%s after the owner's last Unlock: exists %d, %v", m.Name(), n, err)
				}
			}
			if n := ownedCount(&multiOwned, key); n != 0 {
				t.Errorf("%d entries kept for the owner once its holds ended", n)
			}
		})
	}
}
