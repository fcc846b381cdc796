package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Once a MultiLock's member is lost, the members it still holds are given
// back without an Unlock, and a later Unlock answers ErrNotHeld.
func TestMultiLockMemberLossGivesBack(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), WithWatchdog(600*time.Millisecond, 100*time.Millisecond))
	ctx := testCtx(t, 20*time.Second)
	x, y := mustMutex(t, c, "x"), mustMutex(t, c, "y")
	ml := mustMulti(t, []Locker{x, y})
	lctx, err := ml.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := y.ForceUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lctx.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("MultiLock context alive after a member was lost")
	}
	if !eventually(3*time.Second, func() bool { l, _ := x.IsLocked(ctx); return !l }) {
		t.Fatalf("member x still held 3s after the MultiLock was lost (%v), with no Unlock", context.Cause(lctx))
	}
	if err := ml.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Unlock after the loss: %v, want ErrNotHeld", err)
	}
}

// A MultiLock locked with a context that then ends with ErrLockLost (the
// context of another lock, lost) is not lost itself: like a Mutex, its
// members stay held until Unlock.
func TestMultiLockParentLostKeepsHold(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 20*time.Second)
	other := mustMutex(t, c, "other")
	octx, err := other.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	x, y := mustMutex(t, c, "x"), mustMutex(t, c, "y")
	ml := mustMulti(t, []Locker{x, y})
	lctx, err := ml.Lock(octx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.ForceUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	<-lctx.Done()
	time.Sleep(200 * time.Millisecond)
	if got := lockedAll(t, ctx, x, y); !got[0] || !got[1] {
		t.Fatalf("members given back when the context the MultiLock was locked with ended (%v): locked = %v", context.Cause(lctx), got)
	}
	if err := ml.Unlock(lctx); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
}
