package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An owner that holds a Mutex itself and, through a MultiLock, as one of its
// members, and gives back its own hold with Unlock given a context that only
// names the owner: the member's context, which the MultiLock holds and the
// caller never saw, is not the one that ends. Ending it made the MultiLock
// read its member as released through its own handle, end its context and
// give every member back, the Mutex's own hold with them.
func TestUnlockByOwnerSparesMultiLockMember(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 20*time.Second)
	octx := WithOwner(ctx, "job")
	order, wallet := mustMutex(t, c, "member-order"), mustMutex(t, c, "member-wallet")
	ml := mustMulti(t, []Locker{order, wallet})
	own, err := order.Lock(octx)
	if err != nil {
		t.Fatal(err)
	}
	again, err := order.Lock(octx) // a re-entry of its own, to give back by owner
	if err != nil {
		t.Fatal(err)
	}
	mctx, err := ml.Lock(octx)
	if err != nil {
		t.Fatal(err)
	}
	if err := order.Unlock(octx); err != nil {
		t.Fatalf("Unlock naming only the owner: %v", err)
	}
	time.Sleep(200 * time.Millisecond)
	if mctx.Err() != nil {
		t.Errorf("the MultiLock's context ended with an Unlock of the owner's own hold of a member: %v", context.Cause(mctx))
	}
	if own.Err() != nil {
		t.Errorf("the owner's first hold ended: %v", context.Cause(own))
	}
	if again.Err() == nil {
		t.Errorf("the context of the owner's most recent hold of its own is still live")
	}
	if n := fieldCount(t, node, wallet.Key(), c.id+":job"); n != 1 {
		t.Errorf("the other member's count on the server: %d, want 1", n)
	}
	if err := ml.Unlock(mctx); err != nil {
		t.Errorf("MultiLock Unlock: %v", err)
	}
	if err := order.Unlock(own); err != nil {
		t.Errorf("Unlock of the first hold: %v", err)
	}
}
