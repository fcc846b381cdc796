package scriptlock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// Lock(ctx) on a RedLock returns within about a round trip of ctx's
// cancellation also when ctx, without a deadline, is cancelled while a
// failed attempt's release hangs on a node that stopped answering: the
// release goes on in the background. It was bounded only when ctx had
// ended, or had a deadline, before the releases began.
func TestRedLockLockCancelledDuringRelease(t *testing.T) {
	t.Parallel()
	testRedLockCancelledDuringRelease(t, "cjob", func(r *RedLock, ctx context.Context) error {
		_, err := r.Lock(ctx)
		return err
	})
}

// So does TryLock with a wait, which waited for the release until its
// wait's end (plus the overrun), or the release timeout.
func TestRedLockTryLockCancelledDuringRelease(t *testing.T) {
	t.Parallel()
	testRedLockCancelledDuringRelease(t, "tjob", func(r *RedLock, ctx context.Context) error {
		_, err := r.TryLock(ctx, 10*time.Second)
		return err
	})
}

func testRedLockCancelledDuringRelease(t *testing.T, name string, lock func(*RedLock, context.Context) error) {
	nodes, cs, pxs := proxiedNodes(t, 3)
	ctx := testCtx(t, 30*time.Second)
	r := mustRedLock(t, name, cs, WithReleaseTimeout(5*time.Second), WithNodeTimeout(300*time.Millisecond))
	l, err := r.Lock(ctx) // warm every connection
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Unlock(l); err != nil {
		t.Fatal(err)
	}
	// Nodes 1 and 2 are held by another owner: node 0 alone grants, and
	// its release then finds it frozen.
	for _, i := range []int{1, 2} {
		hctx, err := mustMutex(t, cs[i], name).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = mustMutex(t, cs[i], name).Unlock(hctx) }()
	}
	var once sync.Once
	r.releaseHook = func(node int) {
		if node == 0 {
			once.Do(pxs[0].Freeze)
		}
	}
	defer func() { r.releaseHook = nil }()
	defer pxs[0].Thaw()
	lctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const after = 300 * time.Millisecond
	time.AfterFunc(after, cancel)
	start := time.Now()
	err = lock(r, lctx)
	elapsed := time.Since(start)
	r.releaseHook = nil
	pxs[0].Thaw()
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrQuorum) {
		t.Errorf("with two nodes held elsewhere: %v, want ErrQuorum and context.Canceled", err)
	}
	if elapsed > after+400*time.Millisecond {
		t.Errorf("cancelled after %s, returned after %s", after, elapsed)
	}
	if !eventually(8*time.Second, func() bool { return !heldOn(t, r, nodes, 0)[0] }) {
		t.Fatal("lock left on node 0 after the failed Lock")
	}
}
