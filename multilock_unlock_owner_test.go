package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// MultiLock.Unlock given a context that only names the owner (WithOwner), as
// Locker.Unlock allows, gives back that owner's most recent hold of the
// MultiLock taken here, as its own context would: the lock context ends
// with context.Canceled. The members were released by owner alone, and the
// lock context ended as if a member had been lost (ErrLockLost).
func TestMultiLockUnlockByOwner(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 20*time.Second)
	ml := mustMulti(t, []Locker{mustMutex(t, c, "order"), mustMutex(t, c, "wallet")})
	lctx, err := ml.Lock(WithOwner(ctx, "job-7"))
	if err != nil {
		t.Fatal(err)
	}
	if err := ml.Unlock(WithOwner(ctx, "job-7")); err != nil {
		t.Fatalf("Unlock naming only the owner: %v", err)
	}
	<-lctx.Done()
	if cause := context.Cause(lctx); cause != context.Canceled {
		t.Errorf("lock context after Unlock: cause %v, want context.Canceled", cause)
	}
	for _, name := range []string{"order", "wallet"} {
		if n, err := node.Do(t, "EXISTS", mustMutex(t, c, name).Key()).AsInt64(); err != nil || n != 0 {
			t.Errorf("%s after Unlock: exists %d, %v", name, n, err)
		}
	}
	if err := ml.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
		t.Errorf("Unlock through the context of the hold given back: %v, want ErrNotHeld", err)
	}
}
