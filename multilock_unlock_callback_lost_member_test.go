package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestMultiLockUnlockFromGiveBackCallbackOfMember: a MultiLock lost gives
// back a member that is a RedLock or a MultiLock, whose Unlock releases its
// own parts each on a goroutine of its own, and an Observer's ReleaseStart,
// called for one of those releases, unlocks the lost hold, with its context
// or by owner. That Unlock is made inside the give-back as much as one
// called for a Mutex member is: it answers ErrNotHeld without waiting for
// the give-back, which waits for it.
func TestMultiLockUnlockFromGiveBackCallbackOfMember(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	prefix := sharedPrefix(t)
	plain := newTestClient(t, nodes[0].Client(t), prefix)
	for _, member := range []string{"RedLock", "MultiLock"} {
		for _, how := range []string{"ByContext", "ByOwner"} {
			t.Run(member+"/"+how, func(t *testing.T) {
				obs := &unlockInRelease{err: make(chan error, 1)}
				observed := make([]*Client, len(nodes))
				for i, n := range nodes {
					observed[i] = newTestClient(t, n.Client(t), prefix, WithObserver(obs))
				}
				name := "giveback-member-callback-" + member + "-" + how
				a := mustMutex(t, plain, name+"-a")
				var b Locker = mustRedLock(t, name+"-b", observed)
				if member == "MultiLock" {
					b = mustMulti(t, []Locker{mustMutex(t, observed[0], name+"-b0"), mustMutex(t, observed[1], name+"-b1")})
				}
				ml := mustMulti(t, []Locker{a, b})
				ctx := testCtx(t, 30*time.Second)
				octx := WithOwner(ctx, "job")
				outer, err := ml.Lock(octx)
				if err != nil {
					t.Fatal(err)
				}
				lctx := outer
				if how == "ByOwner" {
					// The lost hold is the owner's most recent, above a live one.
					if lctx, err = ml.Lock(octx); err != nil {
						t.Fatal(err)
					}
				}
				mh := lctx.Value(ml.key).(*multiHeld)
				inner := func() error { return ml.Unlock(lctx) }
				if how == "ByOwner" {
					inner = func() error { return ml.Unlock(WithOwner(ctx, "job")) }
				}
				obs.unlock.Store(&inner)
				if err := a.Unlock(mh.ctxs[0]); err != nil {
					t.Fatal(err)
				}
				select {
				case err := <-obs.err:
					if !errors.Is(err, ErrNotHeld) {
						t.Errorf("the Unlock from the give-back's callback: %v, want ErrNotHeld", err)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("Unlock from an Observer's ReleaseStart for a %s member given back by the lost MultiLock still running after 10s", member)
				}
				select {
				case <-mh.givenBack:
				case <-time.After(10 * time.Second):
					t.Fatal("the give-back of the lost MultiLock still running after 10s")
				}
				if how == "ByOwner" {
					if err := outer.Err(); err != nil {
						t.Fatalf("the owner's earlier hold ended: %v", err)
					}
					if err := ml.Unlock(outer); err != nil {
						t.Fatal(err)
					}
				} else if err := ml.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
					t.Errorf("Unlock after the loss: %v, want ErrNotHeld", err)
				}
			})
		}
	}
}
