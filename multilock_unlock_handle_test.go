package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A MultiLock made again over handles of the same locks unlocks what another
// MultiLock over them locked. Through it, the members were released by
// owner alone: the lock context then ended as if a member were lost
// (ErrLockLost, where Unlock ends it with context.Canceled), the MultiLock
// that took it still counted itself held, and a RedLock member was not
// released at all.
func TestMultiLockUnlockThroughAnotherHandle(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	ctx := testCtx(t, 20*time.Second)
	members := func() []Locker {
		// Every node must grant the RedLock member (each is checked
		// released, and a late grant is undone only in the background):
		// a roomy node timeout, the test measures none.
		return []Locker{mustMutex(t, cs[0], "order"), mustRedLock(t, "wallet", cs, roomyNodeTimeout)}
	}
	ml := mustMulti(t, members())
	lctx, err := ml.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	again := mustMulti(t, members())
	if err := again.Unlock(lctx); err != nil {
		t.Fatalf("Unlock through another MultiLock: %v", err)
	}
	<-lctx.Done()
	if cause := context.Cause(lctx); cause != context.Canceled {
		t.Errorf("lock context after Unlock: cause %v, want context.Canceled", cause)
	}
	for i, n := range nodes {
		keys, err := n.Do(t, "KEYS", "*order").AsStrSlice()
		if err != nil {
			t.Fatal(err)
		}
		wallet, err := n.Do(t, "EXISTS", ml.Locks()[1].(*RedLock).nodes[i].Key()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != 0 || wallet != 0 {
			t.Errorf("node %d after Unlock: order keys %v, wallet held %v", i, keys, wallet == 1)
		}
	}
	if err := ml.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
		t.Errorf("Unlock again through the MultiLock that took it: %v, want ErrNotHeld", err)
	}
}
