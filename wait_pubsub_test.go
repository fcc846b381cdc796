package scriptlock

import (
	"context"
	"testing"
	"time"
)

// waitKind is one kind of wait: setup leaves a holder on h (a Client of its
// own) that keeps a waiter on w waiting; wait waits on w and gives back what
// it got, release ends the holder's hold.
type waitKind struct {
	name     string
	fallback time.Duration // the documented longest sleep between a waiter's calls
	setup    func(t *testing.T, h, w *Client, name string) (wait func(ctx context.Context) error, release func())
}

// lockWaitKind is a waitKind for a pair of lock sides.
func lockWaitKind(name string, hold, wait func(t testing.TB, c *Client, name string) Locker) waitKind {
	return waitKind{name, time.Second, func(t *testing.T, h, w *Client, n string) (func(context.Context) error, func()) {
		hl := hold(t, h, n)
		hctx, err := hl.Lock(testCtx(t, 5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		wl := wait(t, w, n)
		return func(ctx context.Context) error {
				lctx, err := wl.Lock(ctx)
				if err == nil {
					err = wl.Unlock(lctx)
				}
				return err
			}, func() {
				if err := hl.Unlock(hctx); err != nil {
					t.Error(err)
				}
			}
	}}
}

// waitKinds: the locks wait with WithWaiterTimeout(3s), so they call again
// at least every second; semaphores and latches every notifyFallback.
var waitKinds = []waitKind{
	lockWaitKind("Mutex", func(t testing.TB, c *Client, n string) Locker { return mustMutex(t, c, n) },
		func(t testing.TB, c *Client, n string) Locker { return mustMutex(t, c, n) }),
	lockWaitKind("FairMutex", func(t testing.TB, c *Client, n string) Locker { return mustFair(t, c, n) },
		func(t testing.TB, c *Client, n string) Locker { return mustFair(t, c, n) }),
	lockWaitKind("FairMutexRedissonQueue", func(t testing.TB, c *Client, n string) Locker {
		return mustFair(t, c, n, WithRedissonFairQueue(3*time.Second))
	}, func(t testing.TB, c *Client, n string) Locker {
		return mustFair(t, c, n, WithRedissonFairQueue(3*time.Second))
	}),
	lockWaitKind("RWMutexWriter", func(t testing.TB, c *Client, n string) Locker { return mustRW(t, c, n) },
		func(t testing.TB, c *Client, n string) Locker { return mustRW(t, c, n) }),
	lockWaitKind("RWMutexReader", func(t testing.TB, c *Client, n string) Locker { return mustRW(t, c, n) },
		func(t testing.TB, c *Client, n string) Locker { return mustRW(t, c, n).RLocker() }),
	{"Semaphore", notifyFallback, func(t *testing.T, h, w *Client, n string) (func(context.Context) error, func()) {
		hs := mustSem(t, h, n)
		if _, err := hs.AddPermits(testCtx(t, 5*time.Second), 1); err != nil {
			t.Fatal(err)
		}
		if err := hs.Acquire(testCtx(t, 5*time.Second), 1); err != nil {
			t.Fatal(err)
		}
		ws := mustSem(t, w, n)
		return func(ctx context.Context) error {
				if err := ws.Acquire(ctx, 1); err != nil {
					return err
				}
				return ws.Release(ctx, 1)
			}, func() {
				if err := hs.Release(context.Background(), 1); err != nil {
					t.Error(err)
				}
			}
	}},
	{"PermitSemaphore", notifyFallback, func(t *testing.T, h, w *Client, n string) (func(context.Context) error, func()) {
		hs := mustPermits(t, h, n)
		if _, err := hs.TrySetPermits(testCtx(t, 5*time.Second), 1); err != nil {
			t.Fatal(err)
		}
		id, err := hs.Acquire(testCtx(t, 5*time.Second), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		ws := mustPermits(t, w, n)
		return func(ctx context.Context) error {
				wid, err := ws.Acquire(ctx, time.Minute)
				if err != nil {
					return err
				}
				return ws.Release(ctx, wid)
			}, func() {
				if err := hs.Release(context.Background(), id); err != nil {
					t.Error(err)
				}
			}
	}},
	{"CountDownLatch", notifyFallback, func(t *testing.T, h, w *Client, n string) (func(context.Context) error, func()) {
		hl := mustLatch(t, h, n)
		if _, err := hl.TrySetCount(testCtx(t, 5*time.Second), 1); err != nil {
			t.Fatal(err)
		}
		return mustLatch(t, w, n).Await, func() {
			if err := hl.CountDown(context.Background()); err != nil {
				t.Error(err)
			}
		}
	}},
}

// A release announced while the waiter's connection, its subscription
// included, is broken (dropped, and the new one frozen until after the
// release) is lost to that waiter: it still gets what it waits for within
// its fallback, plus a margin.
func TestWaiterFallbackAfterBrokenPubSub(t *testing.T) {
	t.Parallel()
	for _, wk := range waitKinds {
		t.Run(wk.name, func(t *testing.T) {
			p := newProxied(t, WithWaiterTimeout(3*time.Second))
			h := newTestClient(t, p.node.Client(t), WithKeyPrefix(p.c.cfg.prefix), WithWaiterTimeout(3*time.Second))
			wait, release := wk.setup(t, h, p.c, "pubsub-broken")
			done := make(chan error, 1)
			go func() { done <- wait(testCtx(t, 30*time.Second)) }()
			time.Sleep(500 * time.Millisecond) // subscribed, sleeping
			p.px.Freeze()
			p.px.DropAll()
			released := time.Now()
			release()
			time.Sleep(100 * time.Millisecond)
			p.px.Thaw()
			bound := wk.fallback + 1500*time.Millisecond
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("wait: %v", err)
				}
				t.Logf("woken %s after the release", time.Since(released).Round(time.Millisecond))
			case <-time.After(bound):
				t.Fatalf("waiter not through %s after a release its subscription missed (fallback %s)", bound, wk.fallback)
			}
		})
	}
}
