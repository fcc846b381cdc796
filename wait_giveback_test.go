package scriptlock

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// A waiter whose ctx ends just as the release reaches it, over and over at
// slightly different moments: whether its wait succeeded (and it let go) or
// failed, what it waited for ends up free, never held for nobody.
func TestWaitEndingAsGranted(t *testing.T) {
	t.Parallel()
	for _, wk := range waitKinds {
		if wk.name == "CountDownLatch" {
			continue // nothing to give back
		}
		t.Run(wk.name, func(t *testing.T) {
			p := newProxied(t)
			h := newTestClient(t, p.node.Client(t), WithKeyPrefix(p.c.cfg.prefix))
			granted, failed := 0, 0
			for i := range 6 {
				name := fmt.Sprintf("giveback-%d", i)
				wait, release := wk.setup(t, h, p.c, name)
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- wait(ctx) }()
				time.Sleep(100 * time.Millisecond) // waiting
				go release()
				time.Sleep(time.Duration(rand.N(4000)) * time.Microsecond)
				cancel()
				if err := <-done; err != nil {
					failed++
				} else {
					granted++
				}
				if !eventually(2*time.Second, func() bool { return isFree(t, wk.name, h, name) }) {
					t.Fatalf("round %d: %s left taken after a wait that ended as it was granted", i, name)
				}
			}
			t.Logf("%d granted, %d ended", granted, failed)
		})
	}
}

// isFree reports whether nobody holds the lock or permit of kind called name.
func isFree(t *testing.T, kind string, c *Client, name string) bool {
	ctx := testCtx(t, 5*time.Second)
	switch kind {
	case "Semaphore":
		n, err := mustSem(t, c, name).AvailablePermits(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n == 1
	case "PermitSemaphore":
		n, err := mustPermits(t, c, name).AvailablePermits(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	l := waitLocker(t, kind, c, name)
	lctx, err := l.TryLock(ctx, 0)
	if err != nil {
		return false
	}
	if err := l.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	return true
}
