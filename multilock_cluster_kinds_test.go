package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A MultiLock over members of every single-Client kind on different Cluster
// slots (an RWMutex's read side, a FairMutex, a Mutex, an RWMutex's write
// side): the read member is shared with another reader; an attempt refused
// at a member another owner holds gives back only its own members, leaving
// that owner's hold alone; and a member lost (ForceUnlock) ends the
// MultiLock's context and gives the others back.
func TestMultiLockClusterMixedKinds(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3)
	prefix := sharedPrefix(t)
	c := newTestClient(t, cl.Client(t), prefix)
	c2 := newTestClient(t, cl.Client(t), prefix)
	ctx := testCtx(t, 60*time.Second)
	rw, f, m, w := mustRW(t, c, "alpha"), mustFair(t, c, "bravo"), mustMutex(t, c, "charlie"), mustRW(t, c, "delta")
	ml := mustMulti(t, []Locker{rw.RLocker(), f, m, w}, WithMemberWait(300*time.Millisecond))
	type locked interface {
		Name() string
		IsLocked(context.Context) (bool, error)
	}
	isLocked := func(l locked) bool {
		t.Helper()
		ok, err := l.IsLocked(ctx)
		if err != nil {
			t.Fatalf("IsLocked %s: %v", l.Name(), err)
		}
		return ok
	}

	lctx, err := ml.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	reader := mustRW(t, c2, "alpha")
	r, err := reader.TryRLock(ctx, 0)
	if err != nil {
		t.Fatalf("another reader beside the MultiLock's read member: %v", err)
	}
	if err := reader.RUnlock(r); err != nil {
		t.Fatal(err)
	}
	if w2, err := reader.TryLock(ctx, 0); !errors.Is(err, ErrNotAcquired) {
		if err == nil {
			_ = reader.Unlock(w2)
		}
		t.Fatalf("a writer beside the MultiLock's read member: %v", err)
	}
	if err := ml.Unlock(lctx); err != nil {
		t.Fatal(err)
	}

	writer := mustRW(t, c2, "delta")
	wctx, err := writer.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ml.TryLock(ctx, 700*time.Millisecond); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("TryLock with delta held by another owner: %v, want ErrNotAcquired", err)
	}
	for _, l := range []locked{rw, f, m} {
		if isLocked(l) {
			t.Errorf("%s still locked after a refused attempt", l.Name())
		}
	}
	if !isLocked(writer) || wctx.Err() != nil {
		t.Fatalf("the other owner's hold of delta was given back by the MultiLock's attempt (%v)", context.Cause(wctx))
	}
	if err := writer.Unlock(wctx); err != nil {
		t.Fatal(err)
	}

	if lctx, err = ml.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := rw.ForceUnlock(ctx); !ok || err != nil {
		t.Fatalf("ForceUnlock = %v, %v", ok, err)
	}
	select {
	case <-lctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the MultiLock's context is live 10 s after its member was force-unlocked")
	}
	if !errors.Is(context.Cause(lctx), ErrLockLost) {
		t.Fatalf("cause %v, want ErrLockLost", context.Cause(lctx))
	}
	if err := ml.Unlock(lctx); !errors.Is(err, ErrNotHeld) { // waits for the give-back
		t.Fatalf("Unlock after the loss: %v, want ErrNotHeld", err)
	}
	for _, l := range []locked{f, m, w} {
		if isLocked(l) {
			t.Errorf("%s still locked after the MultiLock lost a member", l.Name())
		}
	}
}
