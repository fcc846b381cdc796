package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A shared owner's read or write re-entry of an RWMutex is refused only when
// the owner's field of that side is not in the lock hash: another owner
// writes, or others read while the owner's write hold is gone. The owner's
// live hold of that side must then end with ErrLockLost, as a Mutex's does,
// not keep its context until its next renewal finds out.
func TestRWRefusedReentryEndsOwnersHold(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	for _, write := range []bool{false, true} {
		t.Run(fmt.Sprintf("write=%v", write), func(t *testing.T) {
			c := newTestClient(t, node.Client(t))
			rw := mustRW(t, c, "rw-refused-reentry")
			other := mustRW(t, newTestClient(t, node.Client(t), WithKeyPrefix(c.cfg.prefix)), "rw-refused-reentry")
			ctx := WithOwner(testCtx(t, 20*time.Second), "job-7")
			lock, tryLock, unlock := rw.Lock, rw.TryLock, rw.Unlock
			otherLock, otherUnlock := other.RLock, other.RUnlock
			if !write {
				lock, tryLock, unlock = rw.RLock, rw.TryRLock, rw.RUnlock
				otherLock, otherUnlock = other.Lock, other.Unlock
			}
			lctx, err := lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			node.Do(t, "DEL", rw.Key()) // the server lost the hold (a failover, say)
			octx, err := otherLock(testCtx(t, 5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			defer otherUnlock(octx)
			if _, err := tryLock(ctx, 0); err == nil {
				t.Fatal("the re-entry was granted while another owner holds the lock")
			}
			select {
			case <-lctx.Done():
			case <-time.After(time.Second):
				t.Fatal("the owner's hold lives on after its re-entry was refused")
			}
			if cause := context.Cause(lctx); !errors.Is(cause, ErrLockLost) {
				t.Fatalf("cause = %v, want ErrLockLost", cause)
			}
			if err := unlock(lctx); !errors.Is(err, ErrLockLost) && !errors.Is(err, ErrNotHeld) {
				t.Fatalf("Unlock of the lost hold = %v", err)
			}
		})
	}
}

// A write re-entry of a shared owner that fails with ErrUpgrade found the
// lock in read mode with the owner reading: no write hold is left on the
// server (read mode has no writer), so the owner's write hold ends with
// ErrLockLost as well.
func TestRWUpgradeRefusalEndsOwnersWriteHold(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	rw := mustRW(t, c, "rw-upgrade-lost")
	ctx := WithOwner(testCtx(t, 20*time.Second), "job-7")
	wctx, err := rw.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	node.Do(t, "DEL", rw.Key()) // the server lost the write hold (a failover, say)
	rctx, err := rw.RLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rw.RUnlock(rctx)
	if _, err := rw.TryLock(ctx, 0); !errors.Is(err, ErrUpgrade) {
		t.Fatalf("write re-entry beside the owner's read = %v, want ErrUpgrade", err)
	}
	select {
	case <-wctx.Done():
	case <-time.After(time.Second):
		t.Fatal("the owner's write hold lives on after the server showed it reading only")
	}
	if cause := context.Cause(wctx); !errors.Is(cause, ErrLockLost) {
		t.Fatalf("cause = %v, want ErrLockLost", cause)
	}
	if rctx.Err() != nil {
		t.Fatalf("the owner's read hold ended: %v", context.Cause(rctx))
	}
}
