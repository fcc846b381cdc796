package scriptlock

import (
	"testing"
	"time"
)

// Await on a latch that is deleted while it waits returns (Delete releases
// every waiter); one that is counted to zero and at once set counting again
// may keep waiting, as Redisson's does, and returns when the new count
// reaches zero.
func TestLatchAwaitDeletedOrReset(t *testing.T) {
	t.Parallel()
	p := newProxied(t)
	h := newTestClient(t, p.node.Client(t), WithKeyPrefix(p.c.cfg.prefix))
	ctx := testCtx(t, 20*time.Second)
	await := func(name string) chan error {
		done := make(chan error, 1)
		go func() { done <- mustLatch(t, p.c, name).Await(ctx) }()
		time.Sleep(200 * time.Millisecond)
		return done
	}
	within := func(done chan error, d time.Duration, what string) {
		t.Helper()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		case <-time.After(d):
			t.Fatalf("%s: Await still waiting after %s", what, d)
		}
	}

	del := mustLatch(t, h, "deleted")
	if _, err := del.TrySetCount(ctx, 3); err != nil {
		t.Fatal(err)
	}
	done := await("deleted")
	if _, err := del.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	within(done, 500*time.Millisecond, "deleted")

	reset := mustLatch(t, h, "reset")
	if _, err := reset.TrySetCount(ctx, 1); err != nil {
		t.Fatal(err)
	}
	done = await("reset")
	if err := reset.CountDown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := reset.TrySetCount(ctx, 1); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if err := reset.CountDown(ctx); err != nil {
		t.Fatal(err)
	}
	within(done, 500*time.Millisecond, "reset, then counted down")
}
