package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

func TestMutexReentrantLifecycle(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	m := mustMutex(t, c, "order:1")

	lctx, err := m.Lock(ctx)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	tok1, ok := Fence(lctx)
	if !ok || tok1 <= 0 {
		t.Fatalf("Fence = %d, %v; want a positive token", tok1, ok)
	}
	// Re-entry by the same owner (carried in lctx) counts holds, same token.
	lctx2, err := m.Lock(lctx)
	if err != nil {
		t.Fatalf("re-entrant Lock: %v", err)
	}
	if tok2, _ := Fence(lctx2); tok2 != tok1 {
		t.Fatalf("re-entry token = %d, want %d", tok2, tok1)
	}
	if st, err := m.State(lctx); err != nil || !st.Locked || st.HoldCount != 2 || st.Lease <= 0 || st.Lease > DefaultLease {
		t.Fatalf("State = %+v, %v; want locked, 2 holds, lease in (0, %s]", st, err, DefaultLease)
	}
	// Asked without an owner: locked, no holds of its own.
	if st, err := m.State(ctx); err != nil || !st.Locked || st.HoldCount != 0 {
		t.Fatalf("State without owner = %+v, %v", st, err)
	}
	if locked, err := m.IsLocked(ctx); err != nil || !locked {
		t.Fatalf("IsLocked = %v, %v", locked, err)
	}
	// Another owner on the same handle is contended.
	other := WithOwner(ctx, "someone-else")
	if _, err := m.TryLock(other, 0); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("other owner TryLock: %v, want ErrNotAcquired", err)
	}
	var na *NotAcquiredError
	if _, err := m.TryLock(other, 20*time.Millisecond); !errors.As(err, &na) || na.Remaining <= 0 {
		t.Fatalf("TryLock error %v, want *NotAcquiredError with remaining lease", err)
	}
	if err := m.Unlock(other); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Unlock by non-owner: %v, want ErrNotHeld", err)
	}
	if err := m.Unlock(lctx2); err != nil {
		t.Fatalf("Unlock 1: %v", err)
	}
	if lctx.Err() != nil {
		t.Fatal("lock context cancelled while one hold remains")
	}
	if lctx2.Err() == nil {
		t.Fatal("the re-entrant hold's context outlived its Unlock")
	}
	if err := m.Unlock(lctx); err != nil {
		t.Fatalf("Unlock 2: %v", err)
	}
	if context.Cause(lctx) != context.Canceled {
		t.Fatalf("after the last Unlock the lock context should end with context.Canceled, got %v", context.Cause(lctx))
	}
	if err := m.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("third Unlock: %v, want ErrNotHeld", err)
	}
	if locked, _ := m.IsLocked(ctx); locked {
		t.Fatal("still locked after releasing every hold")
	}
	lctx3, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tok3, _ := Fence(lctx3); tok3 <= tok1 {
		t.Fatalf("next acquisition token %d, want > %d", tok3, tok1)
	}
	if err := m.Unlock(lctx3); err != nil {
		t.Fatal(err)
	}
}

func TestMutexBadInput(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := node.Client(t)
	if _, err := New(nil); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("New(nil): %v", err)
	}
	if _, err := New(rc, WithLease(-time.Second)); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("negative lease: %v", err)
	}
	c := newTestClient(t, rc)
	ctx := testCtx(t, 5*time.Second)
	for _, name := range []string{"", strings.Repeat("x", MaxNameLen+1), "a{", "a{}b"} {
		if m, err := c.Mutex(name); m != nil || !errors.Is(err, ErrInvalidName) {
			t.Errorf("Mutex(%q): %v, %v, want ErrInvalidName", name, m, err)
		}
	}
	m := mustMutex(t, c, "ok")
	if _, err := m.LockWithLease(ctx, 0); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("zero lease: %v", err)
	}
	if _, err := m.LockWithLease(ctx, -time.Second); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("negative lease: %v", err)
	}
	if _, err := m.TryLock(ctx, -time.Second); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("negative wait: %v", err)
	}
	if _, err := m.TryLockWithLease(ctx, time.Second, 0); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("TryLockWithLease zero lease: %v", err)
	}
	if err := m.Unlock(ctx); !errors.Is(err, ErrNotHeld) {
		t.Errorf("Unlock without Lock: %v, want ErrNotHeld", err)
	}
	if n := dbsize(t, node); n != 0 {
		t.Fatalf("bad input wrote %d keys", n)
	}
}

// TestMutexExclusion runs 32 goroutines on each of two Clients (separate
// connections) against one lock and checks that critical sections never
// overlap and fencing tokens rise in critical-section order.
func TestMutexExclusion(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	c1 := newTestClient(t, node.Client(t), prefix)
	c2 := newTestClient(t, node.Client(t), prefix)
	ctx := testCtx(t, 60*time.Second)
	const perClient, rounds = 32, 5
	var inside, overlaps atomic.Int32
	var mu sync.Mutex
	var lastToken int64
	var tokenErrs []string
	var wg sync.WaitGroup
	for _, c := range []*Client{c1, c2} {
		for g := 0; g < perClient; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				m := mustMutex(t, c, "stress")
				for r := 0; r < rounds; r++ {
					lctx, err := m.Lock(ctx)
					if err != nil {
						t.Errorf("Lock: %v", err)
						return
					}
					if inside.Add(1) != 1 {
						overlaps.Add(1)
					}
					tok, _ := Fence(lctx)
					mu.Lock()
					if tok <= lastToken {
						tokenErrs = append(tokenErrs, "token not increasing")
					}
					lastToken = tok
					mu.Unlock()
					time.Sleep(time.Millisecond)
					inside.Add(-1)
					if err := m.Unlock(lctx); err != nil {
						t.Errorf("Unlock: %v", err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	if n := overlaps.Load(); n != 0 {
		t.Fatalf("%d overlapping critical sections", n)
	}
	if len(tokenErrs) > 0 {
		t.Fatalf("%d fencing tokens out of order", len(tokenErrs))
	}
}

func TestMutexWatchdogKeepsLockAlive(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), WithWatchdog(600*time.Millisecond, 200*time.Millisecond))
	ctx := testCtx(t, 10*time.Second)
	m := mustMutex(t, c, "wd")
	lctx, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1800 * time.Millisecond) // three leases
	if lctx.Err() != nil {
		t.Fatalf("lock context ended: %v", context.Cause(lctx))
	}
	if st, err := m.State(lctx); err != nil || st.HoldCount != 1 {
		t.Fatalf("State after 3 leases = %+v, %v", st, err)
	}
	if err := m.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	// Unlock stopped the renewals: nothing is left behind.
	time.Sleep(600 * time.Millisecond)
	if locked, _ := m.IsLocked(ctx); locked {
		t.Fatal("lock still present after Unlock")
	}
}

// TestWatchdogScheduleLazy: a hold enters the watchdog's schedule only near
// its first renewal, so short holds never touch it, and holds taken close
// together still share the first renewal's round trip.
func TestWatchdogScheduleLazy(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	const lease, every = 3 * time.Second, time.Second
	c := newTestClient(t, node.Client(t), WithWatchdog(lease, every))
	ctx := testCtx(t, 20*time.Second)
	scheduled := func() int {
		c.wd.mu.Lock()
		defer c.wd.mu.Unlock()
		return len(c.wd.queue)
	}
	const n = 100
	held := make([]context.Context, n)
	ms := make([]*Mutex, n)
	start := time.Now()
	for i := range ms {
		ms[i] = mustMutex(t, c, "lazy"+strconv.Itoa(i))
		lctx, err := ms[i].Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held[i] = lctx
	}
	took := time.Since(start)
	if got := scheduled(); got != 0 && time.Since(start) < every*8/10 {
		t.Fatalf("%d holds in the watchdog's schedule right after Lock, want 0 until near the first renewal", got)
	}
	for c.wd.renewals.Load() < n {
		if time.Since(start) > took+2*every {
			t.Fatalf("%d of %d holds renewed %s after Lock", c.wd.renewals.Load(), n, time.Since(start))
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Taken within a tenth of the interval: one or two round trips (a batch
	// holds at most maxRenewBatch), not one per hold. Each hold joins the
	// schedule on its own timer, a tenth of the interval before its renewal
	// is due; a loaded machine fires some of them after the round that
	// would have taken them has started, and they go in a round of their
	// own (4 in a loaded run): up to a tenth of the holds' count.
	if b := c.wd.batches.Load(); took < every/10 && b > n/10 {
		t.Fatalf("first renewal of %d holds taken within %s took %d round trips, want at most %d", n, took, b, n/10)
	}
	// A renewed hold goes back in the schedule once the deadline its renewal
	// set is armed, just after the renewal is counted: wait for that, well
	// within the interval, before the next round takes them out again.
	if !eventually(every/2, func() bool { return scheduled() == n }) {
		t.Fatalf("%d holds in the watchdog's schedule after the first renewal, want %d", scheduled(), n)
	}
	for i, m := range ms {
		if held[i].Err() != nil {
			t.Fatalf("hold %d ended: %v", i, context.Cause(held[i]))
		}
		if err := m.Unlock(held[i]); err != nil {
			t.Fatal(err)
		}
	}
	if got := scheduled(); got != 0 {
		t.Fatalf("%d holds left in the watchdog's schedule after Unlock", got)
	}
}

// TestMutexWatchdogPartition cuts the holder off from Redis past its lease:
// another owner acquires and the first holder's context is cancelled with
// ErrLockLost.
func TestMutexWatchdogPartition(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	proxy := netproxy.New(t, node.Addr)
	prefix := sharedPrefix(t)
	holder := newTestClient(t, rawClient(t, proxy.Addr), prefix, WithWatchdog(400*time.Millisecond, 130*time.Millisecond))
	other := newTestClient(t, node.Client(t), prefix)
	ctx := testCtx(t, 20*time.Second)

	lctx, err := mustMutex(t, holder, "part").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	proxy.Freeze()
	octx, err := mustMutex(t, other, "part").TryLock(ctx, 5*time.Second)
	if err != nil {
		t.Fatalf("other owner could not take the expired lock: %v", err)
	}
	select {
	case <-lctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("first holder's context was not cancelled after its lease ran out")
	}
	if !errors.Is(context.Cause(lctx), ErrLockLost) {
		t.Fatalf("cause = %v, want ErrLockLost", context.Cause(lctx))
	}
	proxy.Thaw()
	if err := mustMutex(t, other, "part").Unlock(octx); err != nil {
		t.Fatal(err)
	}
}

func TestMutexLossByDeletion(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), WithWatchdog(600*time.Millisecond, 100*time.Millisecond))
	ctx := testCtx(t, 10*time.Second)
	m := mustMutex(t, c, "del")
	lctx, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Deleted behind the Client's back (an expiry, a failover, an operator):
	// the watchdog finds it. ForceUnlock through c would end the hold itself.
	if n, err := node.Do(t, "DEL", m.Key()).AsInt64(); err != nil || n != 1 {
		t.Fatalf("DEL = %d, %v", n, err)
	}
	select {
	case <-lctx.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("lock context not cancelled after the lock was deleted")
	}
	if !errors.Is(context.Cause(lctx), ErrLockLost) {
		t.Fatalf("cause = %v", context.Cause(lctx))
	}
	if err := m.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Unlock of a lost lock: %v, want ErrNotHeld", err)
	}
}

func TestMutexExplicitLeaseExpires(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	m := mustMutex(t, c, "lease")
	lctx, err := m.LockWithLease(ctx, 150*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	other := WithOwner(ctx, "other")
	octx, err := m.TryLock(other, 3*time.Second)
	if err != nil {
		t.Fatalf("lease did not expire: %v", err)
	}
	if t1, _ := Fence(lctx); func() bool { t2, _ := Fence(octx); return t2 <= t1 }() {
		t.Fatal("token after expiry is not greater")
	}
	select {
	case <-lctx.Done():
	case <-time.After(time.Second):
		t.Fatal("the expired holder's context was not cancelled")
	}
	if !errors.Is(context.Cause(lctx), ErrLockLost) {
		t.Fatalf("cause = %v, want ErrLockLost", context.Cause(lctx))
	}
	if err := m.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Unlock after expiry: %v, want ErrNotHeld", err)
	}
	if err := m.Unlock(octx); err != nil {
		t.Fatal(err)
	}
}

func TestMutexWaitHonoursContext(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	m := mustMutex(t, c, "ctx")
	lctx, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(WithOwner(ctx, "waiter"), 100*time.Millisecond)
	defer cancel()
	if _, err := m.Lock(wctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock past deadline: %v, want DeadlineExceeded", err)
	}
	cctx, cancel2 := context.WithCancel(WithOwner(ctx, "waiter"))
	go func() { time.Sleep(50 * time.Millisecond); cancel2() }()
	if _, err := m.Lock(cctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Lock cancelled: %v, want Canceled", err)
	}
	// Unlock with a dead request context still releases.
	dead, cancel3 := context.WithCancel(lctx)
	cancel3()
	if err := m.Unlock(dead); err != nil {
		t.Fatalf("Unlock with cancelled context: %v", err)
	}
	if locked, _ := m.IsLocked(ctx); locked {
		t.Fatal("lock not released")
	}
}

// TestMutexHandoffIsNotified checks that waiters wake on the release message,
// not on their fallback or the holder's lease: with a 30 s lease and a 30 s
// waiter timeout (a waiter calls again on its own every 10 s), each of 16
// queued waiters gets the lock within 2 s of the previous release.
func TestMutexHandoffIsNotified(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	const waiterTimeout = 30 * time.Second
	prefix := sharedPrefix(t)
	c := newTestClient(t, node.Client(t), prefix, WithWaiterTimeout(waiterTimeout))
	ctx := testCtx(t, 20*time.Second)
	m := mustMutex(t, c, "handoff")
	lctx, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const waiters = 16
	gaps := make(chan time.Duration, waiters)
	var released atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < waiters; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wc := newTestClient(t, node.Client(t), prefix, WithWaiterTimeout(waiterTimeout))
			wm := mustMutex(t, wc, "handoff")
			got, err := wm.Lock(ctx)
			if err != nil {
				t.Errorf("waiter Lock: %v", err)
				return
			}
			gaps <- time.Since(time.Unix(0, released.Load()))
			released.Store(time.Now().UnixNano())
			if err := wm.Unlock(got); err != nil {
				t.Errorf("waiter Unlock: %v", err)
			}
		}()
	}
	time.Sleep(300 * time.Millisecond) // let every waiter queue
	released.Store(time.Now().UnixNano())
	if err := m.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(gaps)
	var worst time.Duration
	for g := range gaps {
		worst = max(worst, g)
	}
	// A notified handoff takes milliseconds; 2 s leaves room for a loaded
	// machine and is a fifth of the waiters' fallback.
	if bound := 2 * time.Second; worst > bound {
		t.Fatalf("slowest of %d handoffs took %s (bound %s, fallback %s): waiters are not waking on the release message", waiters, worst, bound, waiterTimeout/3)
	}
}

// Two goroutines locking with one owner (a request's owner in its context)
// at the same time: whichever script runs second re-enters, and its reply
// may come back before the first one's grant is registered. That re-entry
// is the other goroutine's hold, not an orphan to give back: both calls
// hold the lock, twice on the server, until both unlock.
func TestMutexSameOwnerConcurrentLock(t *testing.T) {
	t.Parallel()
	stress(t)
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	m := mustMutex(t, c, "shared")
	ctx := testCtx(t, 60*time.Second)
	for i := range 400 {
		octx := WithOwner(ctx, fmt.Sprint("req-", i))
		var (
			wg   sync.WaitGroup
			ctxs [2]context.Context
			errs [2]error
		)
		for j := range 2 {
			wg.Go(func() { ctxs[j], errs[j] = m.Lock(octx) })
		}
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			t.Fatalf("pair %d: %v, %v", i, errs[0], errs[1])
		}
		st, err := m.State(octx)
		if err != nil || st.HoldCount != 2 {
			t.Fatalf("pair %d: server holds %+v, %v; want 2", i, st, err)
		}
		for j, lc := range ctxs {
			if lc.Err() != nil {
				t.Fatalf("pair %d: context %d ended: %v", i, j, context.Cause(lc))
			}
		}
		for j, lc := range ctxs {
			if err := m.Unlock(lc); err != nil {
				t.Fatalf("pair %d: Unlock %d: %v", i, j, err)
			}
		}
		if locked, err := m.IsLocked(ctx); err != nil || locked {
			t.Fatalf("pair %d: still locked after both unlocks (%v, %v)", i, locked, err)
		}
	}
}

// A re-entry by a goroutine sharing the owner, racing that owner's Unlock of
// its last hold: the last-hold release gives up every hold of the owner on
// the server, so it must not take the re-entry's hold with it.
func TestMutexSameOwnerReentryRacesLastUnlock(t *testing.T) {
	t.Parallel()
	stress(t)
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 60*time.Second)
	m := mustMutex(t, c, "shared")
	for i := 0; i < 300; i++ {
		octx := WithOwner(ctx, "worker")
		l1, err := m.Lock(octx)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var l2 context.Context
		var lerr, uerr error
		start := make(chan struct{})
		wg.Add(2)
		go func() { defer wg.Done(); <-start; l2, lerr = m.Lock(octx) }()
		go func() { defer wg.Done(); <-start; uerr = m.Unlock(l1) }()
		close(start)
		wg.Wait()
		if uerr != nil || lerr != nil {
			t.Fatalf("iteration %d: unlock %v, lock %v", i, uerr, lerr)
		}
		locked, err := m.IsLocked(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !locked {
			t.Fatalf("iteration %d: the re-entrant Lock returned a hold but the lock is free on the server; its context: err=%v cause=%v (ErrLockLost: %v)",
				i, l2.Err(), context.Cause(l2), errors.Is(context.Cause(l2), ErrLockLost))
		}
		if err := m.Unlock(l2); err != nil {
			t.Fatalf("iteration %d: unlock of the re-entry: %v", i, err)
		}
	}
}

// TestEmptyOwnerClears: WithOwner with an empty id clears the owner a
// context carries, so the next Lock is a fresh owner that waits for the
// first instead of re-entering it.
func TestEmptyOwnerClears(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, redistest.Server(t).Client(t))
	ctx := testCtx(t, 5*time.Second)
	m := mustMutex(t, c, "clear-owner")
	lctx, err := m.Lock(WithOwner(ctx, "outer"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.TryLock(WithOwner(lctx, ""), 0); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("TryLock with the owner cleared: %v, want ErrNotAcquired", err)
	}
	again, err := m.TryLock(lctx, 0)
	if err != nil {
		t.Fatalf("re-entry through the lock context: %v", err)
	}
	if o, _ := OwnerFrom(again); o != "outer" {
		t.Fatalf("re-entry owner %q, want outer", o)
	}
	_ = m.Unlock(again)
	_ = m.Unlock(lctx)
}
