package scriptlock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

func lockedAll(t *testing.T, ctx context.Context, ms ...*Mutex) []bool {
	t.Helper()
	out := make([]bool, len(ms))
	for i, m := range ms {
		l, err := m.IsLocked(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = l
	}
	return out
}

// Members on two independent deployments, acquired and released as one.
func TestMultiLockAcrossDeployments(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 2)
	c1 := newTestClient(t, nodes[0].Client(t))
	c2 := newTestClient(t, nodes[1].Client(t))
	ctx := testCtx(t, 10*time.Second)
	a, b, z := mustMutex(t, c1, "a"), mustMutex(t, c2, "b"), mustMutex(t, c1, "z")
	ml := mustMulti(t, []Locker{z, b, a})
	if ml.Name() != "multi[a,b,z]" {
		t.Fatalf("Name = %q", ml.Name())
	}
	lctx, err := ml.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := lockedAll(t, ctx, a, b, z); got[0] != true || got[1] != true || got[2] != true {
		t.Fatalf("locked = %v", got)
	}
	for _, name := range []string{"a", "b", "z"} {
		if tok, ok := FenceOf(lctx, name); !ok || tok <= 0 {
			t.Fatalf("FenceOf(%s) = %d, %v", name, tok, ok)
		}
	}
	if err := ml.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	if lctx.Err() == nil {
		t.Fatal("lock context alive after Unlock")
	}
	if got := lockedAll(t, ctx, a, b, z); got[0] || got[1] || got[2] {
		t.Fatalf("locked after Unlock = %v", got)
	}
	// Bad input.
	if _, err := NewMultiLock(nil); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("empty MultiLock: %v", err)
	}
	if _, err := NewMultiLock([]Locker{a, a}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("duplicate member: %v", err)
	}
	if _, err := NewMultiLock([]Locker{a, nil}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("nil member: %v", err)
	}
}

// One member held elsewhere: the MultiLock gives up holding nothing.
func TestMultiLockAllOrNothing(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	c := newTestClient(t, node.Client(t), prefix)
	other := newTestClient(t, node.Client(t), prefix)
	ctx := testCtx(t, 10*time.Second)
	hctx, err := mustMutex(t, other, "m2").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m1, m2, m3 := mustMutex(t, c, "m1"), mustMutex(t, c, "m2"), mustMutex(t, c, "m3")
	ml := mustMulti(t, []Locker{m1, m2, m3}, WithMemberWait(50*time.Millisecond))
	for _, wait := range []time.Duration{0, 300 * time.Millisecond} {
		if _, err := ml.TryLock(ctx, wait); !errors.Is(err, ErrNotAcquired) {
			t.Fatalf("TryLock(%s): %v, want ErrNotAcquired", wait, err)
		}
		if got := lockedAll(t, ctx, m1, m3); got[0] || got[1] {
			t.Fatalf("partial set held after a failed TryLock(%s): %v", wait, got)
		}
	}
	// Once the holder lets go, Lock gets all three.
	go func() {
		time.Sleep(100 * time.Millisecond)
		mustMutex(t, other, "m2").Unlock(hctx)
	}()
	lctx, err := ml.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := ml.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
}

// Two MultiLocks over the same names in opposite order, on their own
// Clients, 1,000 acquisitions each: no deadlock, no livelock.
func TestMultiLockOppositeOrder(t *testing.T) {
	t.Parallel()
	stress(t)
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	ctx := testCtx(t, 120*time.Second)
	c1 := newTestClient(t, node.Client(t), prefix)
	c2 := newTestClient(t, node.Client(t), prefix)
	ab := mustMulti(t, []Locker{mustMutex(t, c1, "a"), mustMutex(t, c1, "b")})
	ba := mustMulti(t, []Locker{mustMutex(t, c2, "b"), mustMutex(t, c2, "a")})
	const rounds = 1000
	var inside sync.Mutex // held while a MultiLock is held: TryLock fails on overlap
	start := time.Now()
	var wg sync.WaitGroup
	for _, ml := range []*MultiLock{ab, ba} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				lctx, err := ml.Lock(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if !inside.TryLock() {
					t.Error("both MultiLocks held at once")
					return
				}
				inside.Unlock()
				if err := ml.Unlock(lctx); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("2 × %d opposite-order MultiLock acquisitions in %s", rounds, time.Since(start))
}

// Losing one member cancels the MultiLock's context with ErrLockLost.
func TestMultiLockMemberLost(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), WithWatchdog(600*time.Millisecond, 100*time.Millisecond))
	ctx := testCtx(t, 10*time.Second)
	x, y := mustMutex(t, c, "x"), mustMutex(t, c, "y")
	ml := mustMulti(t, []Locker{x, y})
	lctx, err := ml.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := y.ForceUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lctx.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("MultiLock context alive after a member was lost")
	}
	if !errors.Is(context.Cause(lctx), ErrLockLost) {
		t.Fatalf("cause = %v, want ErrLockLost", context.Cause(lctx))
	}
	err = ml.Unlock(lctx)
	if !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Unlock with a lost member: %v, want ErrNotHeld for it", err)
	}
	if locked, _ := x.IsLocked(ctx); locked {
		t.Fatal("the member still held was not released")
	}
}

// Members in different hash slots of a cluster are taken one by one.
func TestMultiLockCluster(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3)
	c := newTestClient(t, cl.Client(t))
	ctx := testCtx(t, 20*time.Second)
	var ls []Locker
	for _, n := range []string{"alpha", "bravo", "charlie", "delta", "echo"} {
		ls = append(ls, mustMutex(t, c, n))
	}
	ml := mustMulti(t, ls)
	lctx, err := ml.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := ml.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
}

// afterLock runs f after each successful TryLock of the Locker it wraps.
type afterLock struct {
	Locker
	f func()
}

func (a afterLock) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	lctx, err := a.Locker.TryLock(ctx, wait)
	if err == nil {
		a.f()
	}
	return lctx, err
}

// A MultiLock whose context ends as its last member is granted, or whose
// earlier member is lost meanwhile, does not report the set as held: it gives
// every member back.
func TestMultiLockEndedAtGrant(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	m1, m2 := mustMutex(t, c, "e1"), mustMutex(t, c, "e2")

	cctx, cancel := context.WithCancel(ctx)
	ml := mustMulti(t, []Locker{m1, afterLock{m2, cancel}})
	if lctx, err := ml.Lock(cctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Lock whose context ended at the last grant: %v, %v; want context.Canceled", lctx, err)
	}
	if got := lockedAll(t, ctx, m1, m2); got[0] || got[1] {
		t.Fatalf("members held after the failed Lock: %v", got)
	}

	// The first member's 100 ms lease runs out while the second is taken:
	// a TryLock without waiting reports not acquired and holds nothing.
	short := mustMutex(t, c, "e1", WithLease(100*time.Millisecond))
	ml = mustMulti(t, []Locker{short, afterLock{m2, func() { time.Sleep(250 * time.Millisecond) }}})
	lctx, err := ml.TryLock(ctx, 0)
	if err == nil {
		t.Fatalf("TryLock reported the set held with a member lost: context err %v", lctx.Err())
	}
	if !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("TryLock with a member lost: %v, want ErrNotAcquired", err)
	}
	if got := lockedAll(t, ctx, m1, m2); got[0] || got[1] {
		t.Fatalf("members held after the failed TryLock: %v", got)
	}
}
