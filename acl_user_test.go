package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestACLUserForClients: the user docs/operations.md gives the Clients of
// one key prefix runs every primitive, waits and wakes included, with no
// refusal logged: on a primary with a replica (the failover guard counts it
// with INFO and waits with WAIT), on a Cluster with replicas (sharded
// pub/sub) and through Sentinel (rueidis confirms the primary with ROLE). A
// handle outside the prefix is refused by Redis with NOPERM, and nothing is
// written.
func TestACLUserForClients(t *testing.T) {
	t.Parallel()
	line := redistest.DocACLUser(t, "docs/operations.md", "orders", "pw")
	asUser := func(o *rueidis.ClientOption) { o.Username, o.Password = "orders", "pw" }
	setUser := func(t *testing.T, nodes ...*redistest.Node) {
		for _, n := range nodes {
			if err := n.Do(t, line...).Error(); err != nil {
				t.Fatalf("%s: %v", strings.Join(line, " "), err)
			}
		}
	}
	t.Run("replicated", func(t *testing.T) {
		t.Parallel()
		primary, replica := redistest.Replicated(t)
		setUser(t, primary, replica)
		runAsACLUser(t, func() rueidis.Client { return primary.Client(t, asUser) })
		if keys, err := primary.Do(t, "KEYS", "*wallets:*").AsStrSlice(); err != nil || len(keys) != 0 {
			t.Fatalf("keys under the refused prefix: %q, %v", keys, err)
		}
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		c := redistest.Cluster(t, 3, redistest.WithClusterReplicas(1))
		setUser(t, c.Nodes...)
		runAsACLUser(t, func() rueidis.Client { return c.Client(t, asUser) })
	})
	t.Run("sentinel", func(t *testing.T) {
		t.Parallel()
		s := redistest.Sentinel(t)
		setUser(t, s.Data...)
		runAsACLUser(t, func() rueidis.Client { return s.Client(t, asUser) })
	})
}

// runAsACLUser runs every primitive on Clients of the prefix "orders:" made
// on dial's clients, and checks a Client of another prefix is refused.
func runAsACLUser(t *testing.T, dial func() rueidis.Client) {
	logs := &logSink{}
	open := func(prefix string) *Client {
		// The guard runs (its INFO and WAIT are the user's to run).
		c, err := New(dial(), WithKeyPrefix(prefix), WithLogger(slog.New(logs)), loadedGuard())
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	a, b := open("orders:"), open("orders:")
	ctx := testCtx(t, 60*time.Second)

	// waitBehind takes a lock with take on a, starts waiter on b behind it,
	// checks the waiter is still waiting after a moment, then releases with
	// give: the waiter must get the lock through the release message.
	waitBehind := func(what string, take func() (func() error, error), waiter func(context.Context) (func() error, error)) {
		t.Helper()
		release, err := take()
		if err != nil {
			t.Fatalf("%s: first: %v", what, err)
		}
		got := make(chan error, 1)
		var giveBack func() error
		var mu sync.Mutex
		go func() {
			r, err := waiter(ctx)
			mu.Lock()
			giveBack = r
			mu.Unlock()
			got <- err
		}()
		select {
		case err := <-got:
			t.Fatalf("%s: the waiter did not wait: %v", what, err)
		case <-time.After(300 * time.Millisecond):
		}
		if err := release(); err != nil {
			t.Fatalf("%s: release: %v", what, err)
		}
		// Woken by the release message, well before the fallback poll (a
		// third of the 5 s waiter timeout) would have found the lock free.
		select {
		case err := <-got:
			if err != nil {
				t.Fatalf("%s: waiter: %v", what, err)
			}
		case <-time.After(1200 * time.Millisecond):
			t.Fatalf("%s: the waiter was not woken by the release", what)
		}
		mu.Lock()
		defer mu.Unlock()
		if err := giveBack(); err != nil {
			t.Fatalf("%s: waiter's release: %v", what, err)
		}
	}

	ma, mb := mustHandle[*Mutex](t)(a.Mutex("order:1")), mustHandle[*Mutex](t)(b.Mutex("order:1"))
	waitBehind("Mutex", func() (func() error, error) {
		lctx, err := ma.LockWithLease(ctx, 20*time.Second)
		if err != nil {
			return nil, err
		}
		if _, ok := Fence(lctx); !ok {
			t.Error("Mutex: no fencing token")
		}
		if _, err := ma.LockWithLease(lctx, 20*time.Second); err != nil { // a re-entry
			return nil, err
		}
		if err := ma.Extend(ctx, lctx, 25*time.Second); err != nil {
			return nil, err
		}
		return func() error {
			if err := ma.Unlock(lctx); err != nil {
				return err
			}
			return ma.Unlock(lctx)
		}, nil
	}, func(ctx context.Context) (func() error, error) {
		lctx, err := mb.Lock(ctx)
		return func() error { return mb.Unlock(lctx) }, err
	})

	fa, fb := mustHandle[*FairMutex](t)(a.FairMutex("order:{2}")), mustHandle[*FairMutex](t)(b.FairMutex("order:{2}"))
	waitBehind("FairMutex", func() (func() error, error) {
		lctx, err := fa.Lock(ctx)
		return func() error { return fa.Unlock(lctx) }, err
	}, func(ctx context.Context) (func() error, error) {
		lctx, err := fb.Lock(ctx)
		return func() error { return fb.Unlock(lctx) }, err
	})

	rwa, rwb := mustHandle[*RWMutex](t)(a.RWMutex("order:3")), mustHandle[*RWMutex](t)(b.RWMutex("order:3"))
	waitBehind("RWMutex", func() (func() error, error) {
		rctx, err := rwa.RLockWithLease(ctx, 20*time.Second)
		return func() error { return rwa.RUnlock(rctx) }, err
	}, func(ctx context.Context) (func() error, error) {
		lctx, err := rwb.Lock(ctx)
		return func() error { return rwb.Unlock(lctx) }, err
	})

	la, lb := mustHandle[*LeanMutex](t)(a.LeanMutex("order:4")), mustHandle[*LeanMutex](t)(b.LeanMutex("order:4"))
	lctx, err := la.Lock(ctx)
	if err != nil {
		t.Fatalf("LeanMutex: %v", err)
	}
	if _, err := lb.TryLock(ctx, 0); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("LeanMutex held: TryLock of another Client: %v, want ErrNotAcquired", err)
	}
	if err := la.Unlock(lctx); err != nil {
		t.Fatalf("LeanMutex: Unlock: %v", err)
	}

	// Waits given up behind a holder leave their places (a Mutex waiter's
	// leave, a writer's withdrawal, a fair waiter's), and ForceUnlock wakes
	// whoever waits.
	giveUp := func(what string, hold func() (func() error, error), try func() error) {
		t.Helper()
		release, err := hold()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if err := try(); !errors.Is(err, ErrNotAcquired) {
			t.Fatalf("%s: a wait behind the holder: %v, want ErrNotAcquired", what, err)
		}
		if err := release(); err != nil {
			t.Fatalf("%s: release: %v", what, err)
		}
	}
	giveUp("Mutex", func() (func() error, error) {
		if _, err := ma.Lock(ctx); err != nil {
			return nil, err
		}
		return func() error {
			if ok, err := mb.ForceUnlock(ctx); !ok || err != nil {
				return fmt.Errorf("ForceUnlock: %v, %v", ok, err)
			}
			return nil
		}, nil
	}, func() error { _, err := mb.TryLock(ctx, 300*time.Millisecond); return err })
	rfa, rfb := mustHandle[*FairMutex](t)(a.FairMutex("order:10", WithRedissonFairQueue(5*time.Second))), mustHandle[*FairMutex](t)(b.FairMutex("order:10", WithRedissonFairQueue(5*time.Second)))
	giveUp("FairMutex with Redisson's queue", func() (func() error, error) {
		lctx, err := rfa.Lock(ctx)
		return func() error { return rfa.Unlock(lctx) }, err
	}, func() error { _, err := rfb.TryLock(ctx, 300*time.Millisecond); return err })
	giveUp("RWMutex", func() (func() error, error) {
		rctx, err := rwa.RLock(ctx)
		if err != nil {
			return nil, err
		}
		if st, err := rwa.State(rctx); err != nil || st.Reads != 1 {
			return nil, fmt.Errorf("State: %+v, %v", st, err)
		}
		return func() error {
			if ok, err := rwb.ForceUnlock(ctx); !ok || err != nil {
				return fmt.Errorf("ForceUnlock: %v, %v", ok, err)
			}
			return nil
		}, nil
	}, func() error { _, err := rwb.TryLock(ctx, 300*time.Millisecond); return err })
	if _, err := la.Lock(ctx); err != nil {
		t.Fatalf("LeanMutex: %v", err)
	}
	if ok, err := lb.ForceUnlock(ctx); !ok || err != nil {
		t.Fatalf("LeanMutex: ForceUnlock: %v, %v", ok, err)
	}

	sa, sb := mustHandle[*Semaphore](t)(a.Semaphore("order:5")), mustHandle[*Semaphore](t)(b.Semaphore("order:5"))
	if _, err := sa.TrySetPermits(ctx, 1); err != nil {
		t.Fatalf("Semaphore: TrySetPermits: %v", err)
	}
	waitBehind("Semaphore", func() (func() error, error) {
		err := sa.Acquire(ctx, 1)
		return func() error { return sa.Release(ctx, 1) }, err
	}, func(ctx context.Context) (func() error, error) {
		err := sb.Acquire(ctx, 1)
		return func() error { return sb.Release(ctx, 1) }, err
	})
	if _, err := sa.AddPermits(ctx, 2); err != nil {
		t.Fatalf("Semaphore: AddPermits: %v", err)
	}
	if n, err := sa.DrainPermits(ctx); err != nil || n != 3 {
		t.Fatalf("Semaphore: DrainPermits: %d, %v; want 3", n, err)
	}
	if _, err := sa.Delete(ctx); err != nil {
		t.Fatalf("Semaphore: Delete: %v", err)
	}

	pa, pb := mustHandle[*PermitSemaphore](t)(a.PermitSemaphore("order:6")), mustHandle[*PermitSemaphore](t)(b.PermitSemaphore("order:6"))
	if _, err := pa.TrySetPermits(ctx, 1); err != nil {
		t.Fatalf("PermitSemaphore: TrySetPermits: %v", err)
	}
	waitBehind("PermitSemaphore", func() (func() error, error) {
		id, err := pa.Acquire(ctx, 20*time.Second)
		if err != nil {
			return nil, err
		}
		if err := pa.Extend(ctx, id, 10*time.Second); err != nil {
			return nil, err
		}
		return func() error { return pa.Release(ctx, id) }, nil
	}, func(ctx context.Context) (func() error, error) {
		id, err := pb.Acquire(ctx, 20*time.Second)
		return func() error { return pb.Release(ctx, id) }, err
	})

	if err := pa.SetPermits(ctx, 2); err != nil {
		t.Fatalf("PermitSemaphore: SetPermits: %v", err)
	}
	if _, err := pa.State(ctx); err != nil {
		t.Fatalf("PermitSemaphore: State: %v", err)
	}
	if _, err := pa.Delete(ctx); err != nil {
		t.Fatalf("PermitSemaphore: Delete: %v", err)
	}

	ca, cb := mustHandle[*CountDownLatch](t)(a.CountDownLatch("order:7")), mustHandle[*CountDownLatch](t)(b.CountDownLatch("order:7"))
	if _, err := ca.TrySetCount(ctx, 1); err != nil {
		t.Fatalf("CountDownLatch: TrySetCount: %v", err)
	}
	waitBehind("CountDownLatch", func() (func() error, error) {
		return func() error { return ca.CountDown(ctx) }, nil
	}, func(ctx context.Context) (func() error, error) {
		return func() error { return nil }, cb.Await(ctx)
	})

	if _, err := ca.TrySetCount(ctx, 2); err != nil {
		t.Fatalf("CountDownLatch: TrySetCount again: %v", err)
	}
	if _, err := ca.Delete(ctx); err != nil {
		t.Fatalf("CountDownLatch: Delete: %v", err)
	}

	ml, err := NewMultiLock([]Locker{mustHandle[*Mutex](t)(a.Mutex("order:8")), mustHandle[*Mutex](t)(a.Mutex("order:9"))})
	if err != nil {
		t.Fatal(err)
	}
	mctx, err := ml.Lock(ctx)
	if err != nil {
		t.Fatalf("MultiLock: %v", err)
	}
	if err := ml.Unlock(mctx); err != nil {
		t.Fatalf("MultiLock: Unlock: %v", err)
	}

	// Outside the prefix: Redis refuses the first call (the caller checks
	// that nothing was written).
	om := mustHandle[*Mutex](t)(open("wallets:").Mutex("w:1"))
	if _, err := om.TryLock(ctx, 0); err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Fatalf("Mutex outside the user's keys: %v, want Redis's NOPERM", err)
	}

	logs.mu.Lock()
	defer logs.mu.Unlock()
	for _, l := range logs.logs {
		if strings.HasPrefix(l, "WARN") || strings.HasPrefix(l, "ERROR") {
			t.Errorf("logged: %s", l)
		}
	}
}

// mustHandle returns a function that fails t on a handle constructor's
// error and returns the handle.
func mustHandle[H any](t *testing.T) func(H, error) H {
	return func(h H, err error) H {
		t.Helper()
		if err != nil {
			t.Fatalf("handle: %v", err)
		}
		return h
	}
}
