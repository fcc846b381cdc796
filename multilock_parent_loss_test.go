package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A MultiLock whose context ended with the context it was locked with
// stays held (TestMultiLockParentLostKeepsHold), and a member lost after
// that makes it give the other members back, and Unlock answers
// ErrNotHeld. The members' watchers ended with that context: the other
// member was renewed by its watchdog until Unlock.
func TestMultiLockParentEndedMemberLoss(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), WithWatchdog(600*time.Millisecond, 100*time.Millisecond))
	ctx := testCtx(t, 20*time.Second)
	parent, end := context.WithCancel(ctx)
	x, y := mustMutex(t, c, "x"), mustMutex(t, c, "y")
	ml := mustMulti(t, []Locker{x, y})
	lctx, err := ml.Lock(parent)
	if err != nil {
		t.Fatal(err)
	}
	end()
	<-lctx.Done()
	if _, err := x.ForceUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	if !eventually(3*time.Second, func() bool { return !lockedAll(t, ctx, y)[0] }) {
		t.Errorf("member y still held 3s after member x was lost, with no Unlock")
	}
	if err := ml.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
		t.Errorf("Unlock after a member was lost: %v, want ErrNotHeld", err)
	}
}

// The same with a RedLock member: its loss of the quorum after the context
// the MultiLock was locked with ended gives the other member back.
func TestMultiLockParentEndedRedLockLoss(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes, WithWatchdog(600*time.Millisecond, 100*time.Millisecond))
	ctx := testCtx(t, 20*time.Second)
	parent, end := context.WithCancel(ctx)
	r := mustRedLock(t, "job", cs, WithNodeTimeout(400*time.Millisecond))
	y := mustMutex(t, cs[0], "y")
	ml := mustMulti(t, []Locker{r, y})
	lctx, err := ml.Lock(parent)
	if err != nil {
		t.Fatal(err)
	}
	end()
	<-lctx.Done()
	for _, i := range []int{0, 1} {
		if _, err := mustMutex(t, cs[i], "job").ForceUnlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if !eventually(3*time.Second, func() bool { return !lockedAll(t, ctx, y)[0] }) {
		t.Errorf("member y still held 3s after the RedLock member lost its quorum, with no Unlock")
	}
	if err := ml.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
		t.Errorf("Unlock after a member was lost: %v, want ErrNotHeld", err)
	}
}
