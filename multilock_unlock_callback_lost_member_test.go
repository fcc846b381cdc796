package scriptlock

import (
	"context"
	"errors"
	"slices"
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
				unlockFromGiveBack(t, ml, a, obs, how, "for a "+member+" member given back by the lost MultiLock")
			})
		}
	}
}

// TestMultiLockUnlockFromRedLockMemberGiveBackCallback: a MultiLock lost
// through another member gives back its RedLock member, which is lost too
// as it does (two of its three nodes released through their own handles):
// that Unlock waits for the RedLock's own give-back of its third node, and
// an Observer's ReleaseStart there unlocks the lost MultiLock hold. That
// Unlock is made inside the MultiLock's give-back as much as one on its own
// goroutine: it answers ErrNotHeld without waiting for it.
func TestMultiLockUnlockFromRedLockMemberGiveBackCallback(t *testing.T) {
	t.Parallel()
	_, cs, obs := lastNodeObserved(t) // the node the RedLock gives back
	a := mustMutex(t, cs[0], "redlock-member-giveback-a")
	r := mustRedLock(t, "redlock-member-giveback-r", cs)
	ml := mustMulti(t, []Locker{a, r})
	ctx := testCtx(t, 30*time.Second)
	// The test needs the RedLock held on every node (two released through
	// their own handles, the third given back): under load a node's grant
	// can come after the node timeout, and the RedLock holds on fewer.
	var lctx context.Context
	var mh *multiHeld
	var rctx context.Context
	var rh *redHeld
	for attempt := 0; ; attempt++ {
		var err error
		if lctx, err = ml.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		mh = lctx.Value(ml.key).(*multiHeld)
		rctx = mh.ctxs[1]
		rh = rctx.(*redCtx).h
		if !slices.Contains(rh.ctxs, nil) {
			break
		}
		if attempt == 20 {
			t.Fatalf("no Lock of 21 held the RedLock member on all 3 nodes")
		}
		if err := ml.Unlock(lctx); err != nil {
			t.Fatal(err)
		}
	}
	// The give-back's Unlock of the RedLock finds it lost.
	r.unlockHook = func() {
		for i := range 2 {
			if err := r.nodes[i].Unlock(rh.ctxs[i]); err != nil {
				t.Errorf("node %d released through its own handle: %v", i, err)
			}
		}
		<-rctx.Done()
	}
	inner := func() error { return ml.Unlock(lctx) }
	obs.unlock.Store(&inner)
	if err := a.Unlock(mh.ctxs[0]); err != nil {
		t.Fatal(err)
	}
	callbackUnlockNotHeld(t, obs, 15*time.Second, "the RedLock member's give-back callback", "an Observer's ReleaseStart of the lost MultiLock's RedLock member's give-back")
	givenBackWithin(t, mh.givenBack, "MultiLock")
	if cause := context.Cause(rctx); !errors.Is(cause, ErrLockLost) {
		t.Errorf("the RedLock member's context: %v, want ErrLockLost", cause)
	}
}
