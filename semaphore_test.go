package scriptlock

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

func TestSemaphoreLifecycle(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	s := mustSem(t, c, "pool")

	if n, err := s.AvailablePermits(ctx); err != nil || n != 0 {
		t.Fatalf("AvailablePermits before set = %d, %v", n, err)
	}
	if ok, err := s.TrySetPermits(ctx, 3); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	if ok, err := s.TrySetPermits(ctx, 10); err != nil || ok {
		t.Fatalf("second TrySetPermits = %v, %v; want false", ok, err)
	}
	// Redisson's layout: a plain string counter under the name.
	if v, err := node.Do(t, "GET", s.Key()).ToString(); err != nil || v != "3" {
		t.Fatalf("GET %s = %q, %v", s.Key(), v, err)
	}
	if err := s.Acquire(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.AvailablePermits(ctx); n != 1 {
		t.Fatalf("available = %d, want 1", n)
	}
	if err := s.TryAcquire(ctx, 2, 0); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("TryAcquire(2, 0) = %v; want ErrNotAcquired", err)
	}
	if err := s.TryAcquire(ctx, 2, 30*time.Millisecond); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("TryAcquire(2, 30ms) = %v; want ErrNotAcquired", err)
	}
	if err := s.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.TryAcquire(ctx, 2, 0); err != nil {
		t.Fatalf("TryAcquire(2) after release = %v", err)
	}
	if err := s.Release(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if n, err := s.AddPermits(ctx, -1); err != nil || n != 2 {
		t.Fatalf("AddPermits(-1) = %d, %v; want 2", n, err)
	}
	if n, err := s.DrainPermits(ctx); err != nil || n != 2 {
		t.Fatalf("DrainPermits = %d, %v; want 2", n, err)
	}
	if n, _ := s.AvailablePermits(ctx); n != 0 {
		t.Fatalf("available after drain = %d", n)
	}
	if n, err := s.DrainPermits(ctx); err != nil || n != 0 {
		t.Fatalf("second DrainPermits = %d, %v", n, err)
	}
}

func TestSemaphoreInvalidInput(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	s := mustSem(t, c, "pool")
	if _, err := s.TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int64{0, -1} {
		if _, err := s.TrySetPermits(ctx, n); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("TrySetPermits(%d): %v", n, err)
		}
		if err := s.Acquire(ctx, n); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Acquire(%d): %v", n, err)
		}
		if err := s.TryAcquire(ctx, n, time.Second); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("TryAcquire(%d): %v", n, err)
		}
		if err := s.Release(ctx, n); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Release(%d): %v", n, err)
		}
	}
	if err := s.TryAcquire(ctx, 1, -time.Second); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("negative wait: %v", err)
	}
	if _, err := s.AddPermits(ctx, 0); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("AddPermits(0): %v", err)
	}
	if n, _ := s.AvailablePermits(ctx); n != 2 {
		t.Fatalf("bad input changed the count: %d", n)
	}
	if _, err := c.Semaphore(""); !errors.Is(err, ErrInvalidName) {
		t.Errorf("empty name: %v", err)
	}
	if _, err := c.CountDownLatch(""); !errors.Is(err, ErrInvalidName) {
		t.Errorf("empty latch name: %v", err)
	}
	if _, err := c.PermitSemaphore(""); !errors.Is(err, ErrInvalidName) {
		t.Errorf("empty permit semaphore name: %v", err)
	}
}

// A release on another Client wakes a waiter through the channel, well
// before the fallback timer would.
func TestSemaphoreWaiterNotified(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	a := newTestClient(t, node.Client(t), prefix)
	b := newTestClient(t, node.Client(t), prefix)
	ctx := testCtx(t, 10*time.Second)
	if _, err := mustSem(t, a, "s").TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := mustSem(t, a, "s").Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	got := make(chan time.Time, 1)
	go func() {
		if err := mustSem(t, b, "s").Acquire(ctx, 1); err != nil {
			t.Error(err)
		}
		got <- time.Now()
	}()
	time.Sleep(200 * time.Millisecond) // let the waiter subscribe and sleep
	released := time.Now()
	if err := mustSem(t, a, "s").Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	select {
	case at := <-got:
		if d := at.Sub(released); d > notifyFallback/2 {
			t.Fatalf("waiter woke %s after the release: polled, not notified", d)
		}
	case <-ctx.Done():
		t.Fatal("waiter never acquired")
	}
	// Redisson's channel carries the new count.
	if ch := mustSem(t, a, "s").channel; ch != "redisson_sc:{"+mustSem(t, a, "s").Key()+"}" {
		t.Fatalf("channel = %q", ch)
	}
}

// One permit, eight waiters on their own Clients: never two holders at once,
// and everyone gets through.
func TestSemaphoreMutualExclusion(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	ctx := testCtx(t, 60*time.Second)
	if _, err := mustSem(t, newTestClient(t, node.Client(t), prefix), "one").TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	var inside, max, total atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		s := mustSem(t, newTestClient(t, node.Client(t), prefix), "one")
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 15 {
				if err := s.Acquire(ctx, 1); err != nil {
					t.Error(err)
					return
				}
				n := inside.Add(1)
				for {
					m := max.Load()
					if n <= m || max.CompareAndSwap(m, n) {
						break
					}
				}
				time.Sleep(time.Millisecond)
				inside.Add(-1)
				total.Add(1)
				if err := s.Release(ctx, 1); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if max.Load() != 1 || total.Load() != 8*15 {
		t.Fatalf("max holders %d, acquisitions %d", max.Load(), total.Load())
	}
}

// A waiter whose context ends takes nothing.
func TestSemaphoreAcquireCancelled(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	s := mustSem(t, c, "s")
	if _, err := s.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := s.Acquire(wctx, 2); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire past deadline: %v", err)
	}
	if n, _ := s.AvailablePermits(ctx); n != 1 {
		t.Fatalf("available = %d, want 1", n)
	}
}

func TestSemaphoreCluster(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3)
	prefix := sharedPrefix(t)
	a := newTestClient(t, cl.Client(t), prefix)
	b := newTestClient(t, cl.Client(t), prefix)
	ctx := testCtx(t, 20*time.Second)
	for _, name := range []string{"cl-sem", "{tagged}sem"} {
		if _, err := mustSem(t, a, name).TrySetPermits(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if err := mustSem(t, a, name).Acquire(ctx, 1); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- mustSem(t, b, name).Acquire(ctx, 1) }()
		time.Sleep(100 * time.Millisecond)
		if err := mustSem(t, a, name).Release(ctx, 1); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(notifyFallback / 2):
			t.Fatalf("%s: waiter not woken by the release", name)
		}
		if n, err := mustSem(t, b, name).AvailablePermits(ctx); err != nil || n != 0 {
			t.Fatalf("available = %d, %v", n, err)
		}
	}
}

// A Release whose reply is lost (its connection dropped after the server ran
// it) is made again, and the retry returns nothing twice: the permits are
// back exactly once, and Release reports success.
func TestSemaphoreReleaseReplyLost(t *testing.T) {
	t.Parallel()
	p := newProxied(t, WithReleaseTimeout(5*time.Second))
	ctx := testCtx(t, 20*time.Second)
	s := mustSem(t, p.c, "release-retry")
	if ok, err := s.TrySetPermits(ctx, 3); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	if err := s.Acquire(ctx, 2); err != nil {
		t.Fatal(err)
	}
	// Scripts loaded, so the release below is one EVALSHA.
	if err := s.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	count := func() int64 { return countAt(t, p.node, s.Key()) }
	if n := count(); n != 2 {
		t.Fatalf("permits before the release = %d, want 2", n)
	}
	err := p.lostReply(t, func() bool { return count() == 3 }, func() error { return s.Release(ctx, 1) })
	if err != nil {
		t.Fatalf("Release whose first reply was lost: %v, want success", err)
	}
	if n := count(); n != 3 {
		t.Fatalf("permits after the retried release = %d, want 3 (returned once)", n)
	}
}

// A DrainPermits whose reply is lost is made again and answers the count the
// first call drained, which the caller needs to give the permits back.
func TestSemaphoreDrainReplyLost(t *testing.T) {
	t.Parallel()
	p := newProxied(t)
	ctx := testCtx(t, 20*time.Second)
	s := mustSem(t, p.c, "drain-retry")
	if ok, err := s.TrySetPermits(ctx, 5); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	if _, err := s.AvailablePermits(ctx); err != nil { // connection open
		t.Fatal(err)
	}
	if _, err := s.DrainPermits(testCtx(t, 5*time.Second)); err != nil { // script loaded
		t.Fatal(err)
	}
	if _, err := s.AddPermits(ctx, 5); err != nil {
		t.Fatal(err)
	}
	var drained int64
	// Replies held back once the record is reserved: the drain's is lost.
	err := p.lostDeletionReply(t, func() bool {
		n, err := p.node.Do(t, "GET", s.Key()).AsInt64()
		return err == nil && n == 0
	}, func() error {
		var err error
		drained, err = s.DrainPermits(ctx)
		return err
	})
	if err != nil || drained != 5 {
		t.Fatalf("DrainPermits whose first reply was lost = %d, %v; want 5, the permits it took", drained, err)
	}
}

// A recorded call (here AddPermits, with a context that never ends) gives up
// before its record expires: a repeat that reached the server after that,
// once the network heals, would change the count a second time.
func TestRecordedCallEndsBeforeItsRecord(t *testing.T) {
	t.Parallel()
	p := newProxied(t)
	p.c.recordTTL = 1200 * time.Millisecond
	ctx := testCtx(t, 20*time.Second)
	s := mustSem(t, p.c, "record-bound")
	if ok, err := s.TrySetPermits(ctx, 3); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	if _, err := s.AddPermits(ctx, 1); err != nil { // script loaded
		t.Fatal(err)
	}
	count := func() int64 { return countAt(t, p.node, s.Key()) }
	p.px.FreezeReplies()
	res := make(chan error, 1)
	start := time.Now()
	var took time.Duration
	go func() {
		_, err := s.AddPermits(context.Background(), 1)
		took = time.Since(start)
		res <- err
	}()
	if !eventually(3*time.Second, func() bool { return count() == 5 }) {
		p.px.Thaw()
		t.Fatal("AddPermits did not reach the server")
	}
	p.px.Refuse()                                    // the reply is lost, and every repeat fails until Thaw
	time.Sleep(p.c.recordTTL + 500*time.Millisecond) // the record has expired
	p.px.Thaw()
	select {
	case err := <-res:
		if err == nil {
			t.Error("AddPermits reported success although none of its repeats was answered in time")
		}
		t.Logf("AddPermits returned after %v: %v", took, err)
		if took >= p.c.recordTTL {
			t.Errorf("AddPermits returned after %v, not before its record expired (%v)", took, p.c.recordTTL)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("AddPermits did not return")
	}
	time.Sleep(300 * time.Millisecond)
	if n := count(); n != 5 {
		t.Fatalf("permits = %d, want 5 (added once; a repeat after its record expired added again)", n)
	}
}

// Releases and AddPermits, each within range, that would take the count
// beyond 2^53 - 1 either way fail with ErrInvalidArgument and change nothing:
// past there the scripts' Lua numbers round, so counts came back off by a
// few (and near 2^63 negative), and comparisons with them could be wrong.
func TestSemaphoreCountRange(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	type counter struct {
		key     string
		add     func(context.Context, int64) (int64, error)
		release func(context.Context) error // adds one permit
	}
	sem := mustSem(t, c, "range")
	per := mustPermits(t, c, "range-permits")
	for name, k := range map[string]counter{
		"Semaphore":       {sem.Key(), sem.AddPermits, func(ctx context.Context) error { return sem.Release(ctx, 1) }},
		"PermitSemaphore": {per.Key(), per.AddPermits, nil},
	} {
		t.Run(name, func(t *testing.T) {
			for _, sign := range []int64{1, -1} {
				node.Do(t, "DEL", k.key)
				if v, err := k.add(ctx, sign*maxCount); err != nil || v != sign*maxCount {
					t.Fatalf("AddPermits(%d) = %d, %v", sign*maxCount, v, err)
				}
				keys, _ := node.Do(t, "DBSIZE").AsInt64()
				if v, err := k.add(ctx, sign); !errors.Is(err, ErrInvalidArgument) {
					t.Fatalf("AddPermits(%d) at %d = %d, %v; want ErrInvalidArgument", sign, sign*maxCount, v, err)
				}
				if sign > 0 && k.release != nil {
					if err := k.release(ctx); !errors.Is(err, ErrInvalidArgument) {
						t.Fatalf("Release(1) at %d: %v; want ErrInvalidArgument", int64(maxCount), err)
					}
				}
				if n := countAt(t, node, k.key); n != sign*maxCount {
					t.Fatalf("count after the refused changes = %d, want %d", n, sign*maxCount)
				}
				if n, _ := node.Do(t, "DBSIZE").AsInt64(); n != keys {
					t.Fatalf("%d keys after the refused changes, %d before: they left a record", n, keys)
				}
			}
		})
	}
}

// DrainPermits on a name another kind of lock holds is ErrWrongKind and
// leaves the lock alone. On a LeanMutex (a string key) it set the key to 0,
// so the holder's Unlock found nothing and nobody could lock until the lease
// ran out.
func TestSemaphoreDrainOtherKind(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	for _, lc := range []struct {
		name string
		lock Locker
	}{
		{"LeanMutex", mustLean(t, c, "drain-lean")},
		{"Mutex", mustMutex(t, c, "drain-mutex")},
	} {
		lctx, err := lc.lock.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s := mustSem(t, c, lc.lock.(interface{ Name() string }).Name())
		if n, err := s.DrainPermits(ctx); !errors.Is(err, ErrWrongKind) {
			t.Fatalf("%s: DrainPermits = %d, %v; want ErrWrongKind", lc.name, n, err)
		}
		if err := lc.lock.Unlock(lctx); err != nil {
			t.Fatalf("%s: Unlock after the refused drain: %v", lc.name, err)
		}
	}
}

// Delete of a Semaphore, PermitSemaphore or CountDownLatch whose name
// another kind of lock holds is ErrWrongKind and leaves the lock alone.
// Redisson's delete deletes whatever the key holds, which ended another
// owner's lock.
func TestDeleteOtherKind(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	type deleter interface {
		Delete(context.Context) (bool, error)
	}
	for _, kind := range []struct {
		name string
		open func(name string) deleter
	}{
		{"Semaphore", func(n string) deleter { return mustSem(t, c, n) }},
		{"PermitSemaphore", func(n string) deleter { return mustPermits(t, c, n) }},
		{"CountDownLatch", func(n string) deleter { return mustLatch(t, c, n) }},
	} {
		for _, lc := range []struct {
			name string
			lock Locker
		}{
			{"LeanMutex", mustLean(t, c, "del-lean-"+kind.name)},
			{"Mutex", mustMutex(t, c, "del-mutex-"+kind.name)},
		} {
			lctx, err := lc.lock.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			d := kind.open(lc.lock.(interface{ Name() string }).Name())
			if ok, err := d.Delete(ctx); !errors.Is(err, ErrWrongKind) {
				t.Fatalf("%s.Delete on a held %s = %v, %v; want ErrWrongKind", kind.name, lc.name, ok, err)
			}
			if err := context.Cause(lctx); err != nil {
				t.Fatalf("%s.Delete on a held %s ended the hold: %v", kind.name, lc.name, err)
			}
			if err := lc.lock.Unlock(lctx); err != nil {
				t.Fatalf("%s: Unlock after the refused %s.Delete: %v", lc.name, kind.name, err)
			}
		}
	}
}
