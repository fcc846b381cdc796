package scriptlock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestMutexRedisRestart kills Redis (kill -9) and starts it again while one
// owner holds the lock and others wait. Waiters must return (error or lock)
// and never hang past their context; nothing leaks after Close.
func TestMutexRedisRestart(t *testing.T) {
	node := redistest.Server(t, redistest.WithAOF())
	before := goleak.IgnoreCurrent()
	rc := rawClient(t, node.Addr)
	prefix := sharedPrefix(t)
	c := newTestClient(t, rc, prefix)
	ctx := testCtx(t, 30*time.Second)
	m := mustMutex(t, c, "restart")
	lctx, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tok1, _ := Fence(lctx)
	var wg sync.WaitGroup
	results := make(chan error, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wctx, cancel := context.WithTimeout(WithOwner(ctx, "w"+time.Now().String()), 8*time.Second)
			defer cancel()
			got, err := m.Lock(wctx)
			if err == nil {
				err = m.Unlock(got)
			}
			results <- err
		}()
	}
	time.Sleep(200 * time.Millisecond)
	node.Kill()
	time.Sleep(200 * time.Millisecond)
	node.Restart(t)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("waiters hung after a Redis restart")
	}
	close(results)
	for err := range results {
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Logf("waiter returned: %v", err)
		}
	}
	// AOF kept the lock and the watchdog kept renewing it across the restart.
	if lctx.Err() != nil {
		t.Fatalf("holder lost the lock across a restart with AOF: %v", context.Cause(lctx))
	}
	if err := m.Unlock(lctx); err != nil {
		t.Fatalf("Unlock after restart: %v", err)
	}
	// AOF kept the fencing counter: the next token is still larger.
	m2 := mustMutex(t, c, "restart")
	l2, err := m2.TryLock(WithOwner(ctx, "after"), 5*time.Second)
	if err != nil {
		t.Fatalf("lock after restart: %v", err)
	}
	if tok2, _ := Fence(l2); tok2 <= tok1 {
		t.Fatalf("token after restart %d, want > %d", tok2, tok1)
	}
	_ = m2.Unlock(l2)
	c.Close()
	rc.Close()
	// The restarted server's process reaper belongs to the harness.
	goleak.VerifyNone(t, before, goleak.IgnoreAnyFunction("github.com/scriptlock/scriptlock/internal/redistest.(*Node).startOnce.func1"))
}

// TestMutexReleaseLatch replays a release whose reply was lost: the second
// call with the same latch key answers the first outcome, not "not held".
func TestMutexReleaseLatch(t *testing.T) {
	node := redistest.Server(t)
	rc := node.Client(t)
	c := newTestClient(t, rc)
	ctx := testCtx(t, 5*time.Second)
	m := mustMutex(t, c, "latch")
	lctx, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	field := c.id + ":" + ownerIn(lctx)
	latch := redissonName("redisson_unlock_latch", m.key) + ":req-1"
	first, held, err := generated.MutexRelease(ctx, rc, m.key, m.channel, latch, m.waiters, m.wake, time.Second, field, "publish", time.Minute, false)
	if err != nil || !held || first != 1 {
		t.Fatalf("release = %d, %v, %v; want 1 (released)", first, held, err)
	}
	again, held, err := generated.MutexRelease(ctx, rc, m.key, m.channel, latch, m.waiters, m.wake, time.Second, field, "publish", time.Minute, true)
	if err != nil || !held || again != 1 {
		t.Fatalf("retried release = %d, %v, %v; want the first outcome (released)", again, held, err)
	}
	_, held, err = generated.MutexRelease(ctx, rc, m.key, m.channel, latch+"x", m.waiters, m.wake, time.Second, field, "publish", time.Minute, true)
	if err != nil || held {
		t.Fatalf("new release: held=%v, %v; want not held", held, err)
	}
}

// TestMutexFailoverGuard: with a replica connected, acquisitions wait for its
// acknowledgement; with the replica stopped, the acquisition is undone and
// fails with ErrNotReplicated, leaving no lock behind.
func TestMutexFailoverGuard(t *testing.T) {
	primary, replica := redistest.Replicated(t)
	c := newTestClient(t, primary.Client(t), WithFailoverGuard(true, 200*time.Millisecond))
	ctx := testCtx(t, 20*time.Second)
	m := mustMutex(t, c, "guarded")
	lctx, err := m.Lock(ctx)
	if err != nil {
		t.Fatalf("Lock with a healthy replica: %v", err)
	}
	if err := m.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	replica.Pause()
	defer replica.Resume()
	_, err = m.Lock(ctx)
	if !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("Lock with the replica stopped: %v, want ErrNotReplicated", err)
	}
	if locked, err := m.IsLocked(ctx); err != nil || locked {
		t.Fatalf("unreplicated acquisition left the lock held (%v, %v)", locked, err)
	}
	off := mustMutex(t, c, "guarded", WithFailoverGuard(false, 0))
	l2, err := off.Lock(ctx)
	if err != nil {
		t.Fatalf("Lock with the guard off: %v", err)
	}
	_ = off.Unlock(l2)

	// The fair and read-write locks are guarded the same way.
	fair := mustFair(t, c, "guarded-fair")
	if _, err := fair.Lock(ctx); !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("FairMutex.Lock with the replica stopped: %v, want ErrNotReplicated", err)
	}
	if locked, err := fair.IsLocked(ctx); err != nil || locked {
		t.Fatalf("unreplicated fair acquisition left the lock held (%v, %v)", locked, err)
	}
	rw := mustRW(t, c, "guarded-rw")
	if _, err := rw.Lock(ctx); !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("RWMutex.Lock with the replica stopped: %v, want ErrNotReplicated", err)
	}
	if _, err := rw.RLock(ctx); !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("RWMutex.RLock with the replica stopped: %v, want ErrNotReplicated", err)
	}
	if locked, err := rw.IsLocked(ctx); err != nil || locked {
		t.Fatalf("unreplicated read-write acquisition left the lock held (%v, %v)", locked, err)
	}
	replica.Resume()
	lf, err := fair.Lock(ctx)
	if err != nil {
		t.Fatalf("FairMutex.Lock with the replica back: %v", err)
	}
	_ = fair.Unlock(lf)
	lw, err := rw.Lock(ctx)
	if err != nil {
		t.Fatalf("RWMutex.Lock with the replica back: %v", err)
	}
	_ = rw.Unlock(lw)
}

func TestMutexCluster(t *testing.T) {
	cl := redistest.Cluster(t, 3)
	prefix := sharedPrefix(t)
	c1 := newTestClient(t, cl.Client(t), prefix)
	c2 := newTestClient(t, cl.Client(t), prefix)
	ctx := testCtx(t, 30*time.Second)
	if !c1.sharded() {
		t.Fatal("cluster client should use sharded pub/sub")
	}
	for _, name := range []string{"order:1", "order:2", "user:{42}:wallet", "x"} {
		m1, m2 := mustMutex(t, c1, name), mustMutex(t, c2, name)
		l1, err := m1.Lock(ctx)
		if err != nil {
			t.Fatalf("%s: Lock: %v", name, err)
		}
		got := make(chan error, 1)
		go func() {
			l2, err := m2.Lock(ctx)
			if err == nil {
				err = m2.Unlock(l2)
			}
			got <- err
		}()
		time.Sleep(100 * time.Millisecond)
		if err := m1.Unlock(l1); err != nil {
			t.Fatalf("%s: Unlock: %v", name, err)
		}
		select {
		case err := <-got:
			if err != nil {
				t.Fatalf("%s: waiter: %v", name, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: waiter not woken by the sharded release message", name)
		}
	}
}
