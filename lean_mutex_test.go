package scriptlock

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

func TestLeanMutexLifecycle(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	l := mustLean(t, c, "order:1")

	lctx, err := l.Lock(ctx)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	// The key is a plain string holding the owner, with the watchdog's lease.
	field := c.id + ":" + ownerIn(lctx)
	if v, err := node.Do(t, "GET", l.Key()).ToString(); err != nil || v != field {
		t.Fatalf("GET %s = %q, %v; want the owner %q", l.Key(), v, err, field)
	}
	if pttl, err := node.Do(t, "PTTL", l.Key()).AsInt64(); err != nil || pttl <= 0 || pttl > DefaultLease.Milliseconds() {
		t.Fatalf("PTTL = %d, %v; want the watchdog lease", pttl, err)
	}
	if _, ok := Fence(lctx); ok {
		t.Fatal("LeanMutex handed out a fencing token")
	}
	if st, err := l.State(lctx); err != nil || !st.Locked || st.HoldCount != 1 || st.Lease <= 0 || st.Lease > DefaultLease {
		t.Fatalf("State(holder) = %+v, %v; want locked, 1 hold, the watchdog lease", st, err)
	}
	if st, err := l.State(ctx); err != nil || !st.Locked || st.HoldCount != 0 {
		t.Fatalf("State(no owner) = %+v, %v; want locked, 0 holds", st, err)
	}
	if locked, err := l.IsLocked(ctx); err != nil || !locked {
		t.Fatalf("IsLocked = %v, %v", locked, err)
	}
	// Extend applies to explicit-lease holds only.
	if err := l.Extend(ctx, lctx, time.Minute); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Extend of a watchdog hold: %v, want ErrInvalidArgument", err)
	}

	// Not reentrant: the holder locking again fails at once and changes
	// nothing, whatever wait it asked for.
	start := time.Now()
	if _, err := l.Lock(lctx); !errors.Is(err, ErrNotReentrant) {
		t.Fatalf("Lock by the holder: %v, want ErrNotReentrant", err)
	}
	if _, err := l.TryLock(lctx, 5*time.Second); !errors.Is(err, ErrNotReentrant) {
		t.Fatalf("TryLock by the holder: %v, want ErrNotReentrant", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("re-entry attempts took %s; they must fail without waiting", d)
	}
	if v, _ := node.Do(t, "GET", l.Key()).ToString(); v != field {
		t.Fatalf("after the refused re-entry the lock holds %q, want %q", v, field)
	}
	if lctx.Err() != nil {
		t.Fatalf("the refused re-entry ended the hold: %v", context.Cause(lctx))
	}

	// Another owner is refused; its TryLock gives up after its wait.
	other := WithOwner(ctx, "someone-else")
	if _, err := l.TryLock(other, 0); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("other owner TryLock: %v, want ErrNotAcquired", err)
	}
	start = time.Now()
	if _, err := l.TryLock(other, 150*time.Millisecond); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("other owner TryLock(150ms): %v, want ErrNotAcquired", err)
	}
	if d := time.Since(start); d < 150*time.Millisecond || d > 2*time.Second {
		t.Fatalf("TryLock(150ms) returned after %s", d)
	}
	// Unlock by a non-owner: ErrNotHeld, and the lock is untouched.
	if err := l.Unlock(other); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Unlock by non-owner: %v, want ErrNotHeld", err)
	}
	if err := l.Unlock(ctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Unlock with no owner in ctx: %v, want ErrNotHeld", err)
	}
	if v, _ := node.Do(t, "GET", l.Key()).ToString(); v != field || lctx.Err() != nil {
		t.Fatalf("after non-owner Unlocks the lock holds %q (ctx %v), want %q", v, lctx.Err(), field)
	}

	if err := l.Unlock(lctx); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	if context.Cause(lctx) != context.Canceled {
		t.Fatalf("after Unlock the lock context should end with context.Canceled, got %v", context.Cause(lctx))
	}
	if exists(t, node, l.Key()) {
		t.Fatal("key left after Unlock")
	}
	if err := l.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("second Unlock: %v, want ErrNotHeld", err)
	}
	if ok, err := l.ForceUnlock(ctx); err != nil || ok {
		t.Fatalf("ForceUnlock of a free lock = %v, %v", ok, err)
	}
	if _, err := l.Lock(other); err != nil {
		t.Fatalf("Lock by the other owner after release: %v", err)
	}
	if ok, err := l.ForceUnlock(ctx); err != nil || !ok {
		t.Fatalf("ForceUnlock = %v, %v", ok, err)
	}
	// The lock of an owner from the context (WithOwner) drew a token to
	// check its release with (TestLeanMutexSharedOwnerToken): its counter is
	// the one key left, as a Mutex leaves it, beside the ForceUnlocks'
	// records of their answers, which expire within a minute.
	others := keysBesideRecords(t, node, redissonName("redisson_unlock_latch", l.Key()))
	if len(others) != 1 || others[0] != redissonName("redisson_lock_token", l.Key()) {
		t.Fatalf("keys left: %q; want the token counter alone", others)
	}
}

func TestLeanMutexBadInput(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 5*time.Second)
	long := make([]byte, MaxNameLen+1)
	for i := range long {
		long[i] = 'x'
	}
	for _, name := range []string{"", string(long), "half{tag"} {
		if l, err := c.LeanMutex(name); !errors.Is(err, ErrInvalidName) || l != nil {
			t.Errorf("LeanMutex(%.20q) = %v, %v; want ErrInvalidName", name, l, err)
		}
	}
	for what, opt := range map[string]LockOption{
		"negative lease":        WithLease(-time.Second),
		"Redisson fair queue":   WithRedissonFairQueue(time.Second),
		"waiter timeout":        WithWaiterTimeout(time.Second),
		"bad watchdog interval": WithWatchdog(time.Second, 2*time.Second),
	} {
		if l, err := c.LeanMutex("ok", opt); !errors.Is(err, ErrInvalidArgument) || l != nil {
			t.Errorf("%s: LeanMutex = %v, %v; want ErrInvalidArgument", what, l, err)
		}
	}
	if _, err := c.Mutex("ok", WithFencing()); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("WithFencing on a Mutex: %v, want ErrInvalidArgument", err)
	}
	l := mustLean(t, c, "ok")
	for what, call := range map[string]func() error{
		"TryLock negative wait":    func() error { _, err := l.TryLock(ctx, -time.Second); return err },
		"LockWithLease zero lease": func() error { _, err := l.LockWithLease(ctx, 0); return err },
		"TryLockWithLease negative lease": func() error {
			_, err := l.TryLockWithLease(ctx, time.Second, -time.Second)
			return err
		},
		"TryLockWithLease negative wait": func() error {
			_, err := l.TryLockWithLease(ctx, -time.Second, time.Second)
			return err
		},
		//lint:ignore SA1012 a nil context is the bad input under test
		"nil context": func() error { _, err := l.Lock(nil); return err },
		//lint:ignore SA1012 a nil context is the bad input under test
		"Unlock nil context": func() error { return l.Unlock(nil) },
	} {
		if err := call(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", what, err)
		}
	}
	if n := dbsize(t, node); n != 0 {
		t.Fatalf("bad input left %d keys", n)
	}
}

// Many goroutines on two Clients: never two holders at once, and every
// acquisition is a fresh owner.
func TestLeanMutexExclusion(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	clients := []*Client{newTestClient(t, node.Client(t), prefix), newTestClient(t, node.Client(t), prefix)}
	ctx := testCtx(t, 60*time.Second)
	var (
		inside, acquisitions atomic.Int64
		wg                   sync.WaitGroup
	)
	const goroutines, rounds = 16, 25
	for g := range goroutines {
		c := clients[g%len(clients)]
		l := mustLean(t, c, "counter")
		wg.Go(func() {
			for range rounds {
				lctx, err := l.Lock(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if n := inside.Add(1); n != 1 {
					t.Errorf("%d holders at once", n)
				}
				acquisitions.Add(1)
				time.Sleep(100 * time.Microsecond)
				inside.Add(-1)
				if err := l.Unlock(lctx); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if got := acquisitions.Load(); got != goroutines*rounds {
		t.Fatalf("%d acquisitions, want %d", got, goroutines*rounds)
	}
	if n := dbsize(t, node); n != 0 {
		t.Fatalf("%d keys left", n)
	}
}

// A waiter polls: it gets the lock soon after the holder releases it, with no
// message, and a Close ends a wait with ErrClosed.
func TestLeanMutexPollingHandOff(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	holderC := newTestClient(t, node.Client(t), prefix)
	waiterC := newTestClient(t, node.Client(t), prefix)
	ctx := testCtx(t, 20*time.Second)
	hctx, err := mustLean(t, holderC, "handoff").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan time.Time, 1)
	l := mustLean(t, waiterC, "handoff")
	go func() {
		wctx, err := l.Lock(ctx)
		got <- time.Now()
		if err != nil {
			t.Error(err)
			return
		}
		_ = l.Unlock(wctx)
	}()
	// Long enough for the waiter's delay to reach its cap.
	time.Sleep(300 * time.Millisecond)
	released := time.Now()
	if err := mustLean(t, holderC, "handoff").Unlock(hctx); err != nil {
		t.Fatal(err)
	}
	select {
	case at := <-got:
		// The cap is 16 ms (plus jitter); a loaded machine gets slack.
		if d := at.Sub(released); d > time.Second {
			t.Fatalf("waiter took the lock %s after its release", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waiter never took the released lock")
	}

	// Close ends a wait.
	hctx, err = mustLean(t, holderC, "closing").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = mustLean(t, holderC, "closing").Unlock(hctx) }()
	closing, err := New(node.Client(t), prefix)
	if err != nil {
		t.Fatal(err)
	}
	res := make(chan error, 1)
	waiter := mustLean(t, closing, "closing")
	go func() {
		_, err := waiter.Lock(ctx)
		res <- err
	}()
	time.Sleep(100 * time.Millisecond)
	closing.Close()
	select {
	case err := <-res:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("wait ended by Close: %v, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the wait")
	}
}

// The watchdog renews a lean lock past several leases; an explicit lease
// ends the lock context before the server lets the key expire.
func TestLeanMutexLease(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	sends := &firstSendClient{Client: node.Client(t)}
	// A lease of 1.2 s renewed every 200 ms: a loaded machine's stalls of
	// a few hundred ms do not take the lock from a live owner.
	c := newTestClient(t, sends, WithWatchdog(1200*time.Millisecond, 200*time.Millisecond))
	ctx := testCtx(t, 20*time.Second)
	l := mustLean(t, c, "lease")
	lctx, err := l.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // over two leases
	if lctx.Err() != nil {
		t.Fatalf("watchdog-held lock lost: %v", context.Cause(lctx))
	}
	if pttl, err := node.Do(t, "PTTL", l.Key()).AsInt64(); err != nil || pttl <= 0 || pttl > 1200 {
		t.Fatalf("PTTL after two leases = %d, %v; want renewed within the 1200 ms lease", pttl, err)
	}
	if err := l.Unlock(lctx); err != nil {
		t.Fatal(err)
	}

	const lease = 500 * time.Millisecond
	sent := time.Now()
	sends.arm()
	lctx, err = l.LockWithLease(ctx, lease)
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan time.Time, 1)
	context.AfterFunc(lctx, func() { ended <- time.Now() })
	select {
	case at := <-ended:
		// The contract: the context ends no later than the lease counted from
		// the request, minus the drift margin; the timer may fire late on a
		// loaded machine, so the bound checked is the lease (the key can
		// expire no sooner) plus scheduling slack.
		if d := at.Sub(sent); d > lease+time.Second {
			t.Fatalf("lock context ended %s after the request, lease %s", d, lease)
		}
		// Counted from before the request went to rueidis (not from its
		// reply), less the margin: not past the lease less the margin
		// counted from when it went. Under load the request may go well
		// after the call began; that only moves this bound later.
		lossAt := monoTime(lctx.Value(lockCtxKey{}).(*lockCtx).hold.lossAt.Load())
		if sends.first().IsZero() {
			t.Fatal("the request never went through the client's Do")
		}
		if bound := sends.first().Add(lease - lossMargin(lease)); lossAt.After(bound) {
			t.Fatalf("loss deadline %s after the request went, past the lease less the margin (%s)", lossAt.Sub(sends.first()), lease-lossMargin(lease))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("lock context never ended")
	}
	if !errors.Is(context.Cause(lctx), ErrLockLost) {
		t.Fatalf("cause = %v, want ErrLockLost", context.Cause(lctx))
	}
	if !eventually(2*time.Second, func() bool { return !exists(t, node, l.Key()) }) {
		t.Fatal("explicit lease did not expire")
	}
	// The expired holder's Unlock: ErrNotHeld.
	if err := l.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Unlock after expiry: %v, want ErrNotHeld", err)
	}
}

// A release whose reply is lost is retried; the retry finds the key gone
// because the first attempt deleted it, and Unlock reports success.
func TestLeanMutexReleaseRetry(t *testing.T) {
	t.Parallel()
	p := newProxied(t, WithReleaseTimeout(5*time.Second))
	l := mustLean(t, p.c, "retry")
	warm(t, l)
	lctx, err := l.Lock(testCtx(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	err = p.lostReply(t, func() bool { return !exists(t, p.node, l.Key()) }, func() error { return l.Unlock(lctx) })
	if err != nil {
		t.Fatalf("Unlock whose first reply was lost: %v, want success", err)
	}
	if cause := context.Cause(lctx); cause != context.Canceled {
		t.Fatalf("cause after the retried Unlock = %v, want context.Canceled", cause)
	}
}

// A LeanMutex and a lock of the hash layout on one name refuse each other
// with ErrWrongKind and change nothing.
func TestLeanMutexWrongKind(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)

	mctx, err := mustMutex(t, c, "shared-name").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := node.Do(t, "HGETALL", mustMutex(t, c, "shared-name").Key()).AsStrMap()
	l := mustLean(t, c, "shared-name")
	if _, err := l.Lock(ctx); !errors.Is(err, ErrWrongKind) {
		t.Fatalf("LeanMutex.Lock on a Mutex's name: %v, want ErrWrongKind", err)
	}
	if _, err := l.TryLock(ctx, time.Second); !errors.Is(err, ErrWrongKind) {
		t.Fatalf("LeanMutex.TryLock on a Mutex's name: %v, want ErrWrongKind", err)
	}
	if _, err := l.ForceUnlock(ctx); !errors.Is(err, ErrWrongKind) {
		t.Fatalf("LeanMutex.ForceUnlock on a Mutex's name: %v, want ErrWrongKind", err)
	}
	if _, err := l.IsLocked(ctx); !errors.Is(err, ErrWrongKind) {
		t.Fatalf("LeanMutex.IsLocked on a Mutex's name: %v, want ErrWrongKind", err)
	}
	after, _ := node.Do(t, "HGETALL", mustMutex(t, c, "shared-name").Key()).AsStrMap()
	if len(after) != 1 || len(before) != 1 || after[c.id+":"+ownerIn(mctx)] != "1" {
		t.Fatalf("the Mutex's hash changed: %v -> %v", before, after)
	}
	if mctx.Err() != nil {
		t.Fatalf("the Mutex's hold ended: %v", context.Cause(mctx))
	}
	if err := mustMutex(t, c, "shared-name").Unlock(mctx); err != nil {
		t.Fatal(err)
	}

	lctx, err := l.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	value, _ := node.Do(t, "GET", l.Key()).ToString()
	for _, other := range []Locker{mustMutex(t, c, "shared-name"), mustFair(t, c, "shared-name"), mustRW(t, c, "shared-name")} {
		if _, err := other.TryLock(ctx, 100*time.Millisecond); !errors.Is(err, ErrWrongKind) {
			t.Fatalf("%T.TryLock on a LeanMutex's name: %v, want ErrWrongKind", other, err)
		}
		// The same owner, as a re-entry would be: still refused.
		if _, err := other.TryLock(lctx, 0); !errors.Is(err, ErrWrongKind) {
			t.Fatalf("%T.TryLock with the LeanMutex's owner: %v, want ErrWrongKind", other, err)
		}
	}
	if v, _ := node.Do(t, "GET", l.Key()).ToString(); v != value || lctx.Err() != nil {
		t.Fatalf("the LeanMutex changed: %q -> %q (ctx %v)", value, v, lctx.Err())
	}
	if err := l.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
}

// An Observer sees a LeanMutex's acquisitions (polling attempts counted),
// releases and hold ends under the lean_mutex primitive.
func TestLeanMutexObserved(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rec := &recorder{}
	prefix := sharedPrefix(t)
	c := newTestClient(t, node.Client(t), prefix, WithObserver(rec))
	other := newTestClient(t, node.Client(t), prefix)
	ctx := testCtx(t, 10*time.Second)
	hctx, err := mustLean(t, other, "obs").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Released once the Lock below was refused (its SET after the
	// holder's): a release timed from the start could come, on a loaded
	// machine, before the Lock's first attempt, which then took the lock.
	sets := commandCalls(t, node)["set"]
	l := mustLean(t, c, "obs")
	type locked struct {
		ctx context.Context
		err error
	}
	got := make(chan locked, 1)
	go func() {
		lctx, err := l.Lock(ctx)
		got <- locked{lctx, err}
	}()
	if !eventually(5*time.Second, func() bool { return commandCalls(t, node)["set"] > sets }) {
		t.Fatal("the Lock made no attempt in 5 s")
	}
	if err := mustLean(t, other, "obs").Unlock(hctx); err != nil {
		t.Fatal(err)
	}
	res := <-got
	lctx, err := res.ctx, res.err
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	ends := rec.waitEnds(t, 1)
	acq, rel, _ := rec.take()
	if len(acq) != 1 || acq[0].op != (Op{PrimitiveLeanMutex, "obs"}) || acq[0].e.Outcome != Acquired || acq[0].e.Attempts < 2 || acq[0].e.Timers < 1 || acq[0].e.Wakeups != 0 {
		t.Fatalf("acquires %+v, want one lean_mutex acquisition after polling", acq)
	}
	if len(rel) != 1 || rel[0].op != (Op{PrimitiveLeanMutex, "obs"}) || rel[0].e.Err != nil {
		t.Fatalf("releases %+v", rel)
	}
	if len(ends) != 1 || ends[0].op != (Op{PrimitiveLeanMutex, "obs"}) || ends[0].e.Cause != EndUnlocked {
		t.Fatalf("hold ends %+v", ends)
	}
}

// With a replica connected the failover guard waits for its acknowledgement;
// with the replica stopped a LeanMutex acquisition (plain or fenced) is undone
// and fails with ErrNotReplicated, leaving no lock behind.
func TestLeanMutexFailoverGuard(t *testing.T) {
	t.Parallel()
	primary, replica := redistest.Replicated(t)
	c := newTestClient(t, primary.Client(t), WithFailoverGuard(true, 200*time.Millisecond))
	ctx := testCtx(t, 20*time.Second)
	for _, l := range []*LeanMutex{mustLean(t, c, "guarded"), mustLean(t, c, "guarded-fenced", WithFencing())} {
		lctx, err := l.Lock(ctx)
		if err != nil {
			t.Fatalf("%s: Lock with a healthy replica: %v", l.Name(), err)
		}
		if err := l.Unlock(lctx); err != nil {
			t.Fatal(err)
		}
		replica.Pause()
		_, err = l.Lock(ctx)
		if !errors.Is(err, ErrNotReplicated) {
			replica.Resume()
			t.Fatalf("%s: Lock with the replica stopped: %v, want ErrNotReplicated", l.Name(), err)
		}
		locked, err := l.IsLocked(ctx)
		replica.Resume()
		if err != nil || locked {
			t.Fatalf("%s: unreplicated acquisition left the lock held (%v, %v)", l.Name(), locked, err)
		}
		lctx, err = l.Lock(ctx)
		if err != nil {
			t.Fatalf("%s: Lock with the replica back: %v", l.Name(), err)
		}
		if err := l.Unlock(lctx); err != nil {
			t.Fatal(err)
		}
	}
}

// An unfenced LeanMutex takes a lock of a fresh owner with the plain SET (no
// token counter is touched), and draws a token for a hold whose owner comes
// from the context, so that its release can name it (see
// TestLateReleaseSparesNewHold); that token is not handed out as a Fence.
func TestLeanMutexSharedOwnerToken(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	counter := func(l *LeanMutex) string { return redissonName("redisson_lock_token", l.Key()) }

	fresh := mustLean(t, c, "fresh-owner")
	lctx, err := fresh.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := node.Do(t, "EXISTS", counter(fresh)).AsInt64(); err != nil || n != 0 {
		t.Fatalf("EXISTS %s = %d, %v after a fresh owner's Lock; want 0 (the plain SET)", counter(fresh), n, err)
	}
	if err := fresh.Unlock(lctx); err != nil {
		t.Fatal(err)
	}

	l := mustLean(t, c, "shared-owner-token")
	octx := WithOwner(ctx, "worker-3")
	var last int64
	for i := range 3 {
		lctx, err := l.Lock(octx)
		if err != nil {
			t.Fatalf("Lock %d: %v", i, err)
		}
		if _, ok := Fence(lctx); ok {
			t.Fatalf("Lock %d: an unfenced LeanMutex handed out a fencing token", i)
		}
		drawn, err := node.Do(t, "GET", counter(l)).AsInt64()
		if err != nil || drawn <= last {
			t.Fatalf("Lock %d: %s = %d, %v; want a token above %d", i, counter(l), drawn, err, last)
		}
		last = drawn
		if v, err := node.Do(t, "GET", l.Key()).ToString(); err != nil || v != c.fieldOf(l, "worker-3") {
			t.Fatalf("Lock %d: GET %s = %q, %v; want the owner", i, l.Key(), v, err)
		}
		if err := l.Unlock(lctx); err != nil {
			t.Fatalf("Unlock %d: %v", i, err)
		}
		if n, err := node.Do(t, "EXISTS", l.Key()).AsInt64(); err != nil || n != 0 {
			t.Fatalf("Unlock %d left the key: EXISTS = %d, %v", i, n, err)
		}
	}
}

// Goroutines that share an owner (WithOwner) and Lock a free LeanMutex at
// the same moment: one gets it, every other one fails with ErrNotReentrant
// (a LeanMutex counts no holds), never a second success.
func TestLeanMutexSharedOwnerRace(t *testing.T) {
	t.Parallel()
	stress(t)
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 60*time.Second)
	l := mustLean(t, c, "shared-owner")
	for i := 0; i < 300; i++ {
		octx := WithOwner(ctx, "worker")
		var wg sync.WaitGroup
		var mu sync.Mutex
		var wins int
		var others []error
		start := make(chan struct{})
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, err := l.TryLock(octx, 0)
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					wins++
				} else {
					others = append(others, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if wins != 1 {
			t.Fatalf("round %d: %d goroutines of one owner hold the LeanMutex at once (others: %v); want 1, the rest ErrNotReentrant", i, wins, others)
		}
		for _, err := range others {
			if !errors.Is(err, ErrNotReentrant) {
				t.Fatalf("round %d: %v, want ErrNotReentrant", i, err)
			}
		}
		if ok, err := l.ForceUnlock(ctx); err != nil || !ok {
			t.Fatalf("ForceUnlock = %v, %v", ok, err)
		}
		// Forget the local hold: Unlock would report the forced release.
		c.mu.Lock()
		h := c.holds[holdID(l.Key(), c.fieldOf(l, "worker"))]
		c.mu.Unlock()
		if h != nil {
			c.finish(h, ErrLockLost)
		}
	}
}

// An Extend that races with the holder's Unlock and reaches the server after
// the release finds the lock gone: the hold still ends as released (its
// context with context.Canceled, the Observer's HoldEnd EndUnlocked), not as
// lost, as a watchdog renewal that meets a release does.
func TestLeanMutexExtendDuringUnlock(t *testing.T) {
	t.Parallel()
	stress(t)
	node := redistest.Server(t)
	rec := &recorder{}
	c := newTestClient(t, node.Client(t), WithObserver(rec))
	ctx := testCtx(t, 2*time.Minute)
	// 2000 rounds a kind, or as many as 15 s allow on a loaded machine (200
	// at least): the race looked for is between two calls of one round.
	const rounds, minRounds, budget = 2000, 200, 15 * time.Second
	ended := 0
	type leaser interface {
		Extender
		TryLockWithLease(ctx context.Context, wait, lease time.Duration) (context.Context, error)
	}
	for _, l := range []leaser{mustLean(t, c, "extend-unlock"), mustMutex(t, c, "extend-unlock-mutex")} {
		begun := time.Now()
		for i := 0; i < rounds && (i < minRounds || time.Since(begun) < budget); i++ {
			ended++
			lctx, err := l.TryLockWithLease(ctx, 0, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			var uerr, eerr error
			start := make(chan struct{})
			wg.Add(2)
			go func() { defer wg.Done(); <-start; uerr = l.Unlock(lctx) }()
			go func() { defer wg.Done(); <-start; eerr = l.Extend(ctx, lctx, 10*time.Second) }()
			close(start)
			wg.Wait()
			if uerr != nil {
				t.Fatalf("%T round %d: Unlock: %v", l, i, uerr)
			}
			if cause := context.Cause(lctx); cause != context.Canceled {
				t.Fatalf("%T round %d: Unlock succeeded (Extend: %v) but the lock context ended with %v, want context.Canceled", l, i, eerr, cause)
			}
		}
	}
	for _, e := range rec.waitEnds(t, ended) {
		if e.e.Cause != EndUnlocked {
			t.Fatalf("hold end %+v, want every hold unlocked", e)
		}
	}
}

// A release whose first attempt never reached the server is retried; when
// by then the lease has run out and another owner holds the lock, the retry
// must not read the missing owner as its own release: Unlock reports
// ErrNotHeld, as for any owner whose lock expired.
func TestLeanMutexReleaseRetryAfterExpiry(t *testing.T) {
	t.Parallel()
	p := newProxied(t, WithReleaseTimeout(5*time.Second))
	l := mustLean(t, p.c, "retry-expired")
	warm(t, l)
	ctx := testCtx(t, 10*time.Second)
	lctx, err := l.LockWithLease(ctx, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	p.px.Freeze() // the release is held back, then dropped unsent
	res := make(chan error, 1)
	go func() { res <- l.Unlock(lctx) }()
	time.Sleep(400 * time.Millisecond) // the lease runs out on the server
	other := newTestClient(t, p.node.Client(t), WithKeyPrefix(p.c.cfg.prefix))
	octx, err := mustLean(t, other, "retry-expired").TryLock(ctx, 0)
	if err != nil {
		p.px.Thaw()
		t.Fatalf("another owner after the lease ran out: %v", err)
	}
	p.px.DropAll()
	p.px.Thaw()
	select {
	case err := <-res:
		if !errors.Is(err, ErrNotHeld) {
			t.Fatalf("Unlock whose lease ran out while its release was retried (another owner holds the lock now): %v, want ErrNotHeld", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Unlock did not return")
	}
	if v, _ := p.node.Do(t, "GET", l.Key()).ToString(); v != other.id+":"+ownerIn(octx) {
		t.Fatalf("the other owner's lock holds %q (octx %v)", v, context.Cause(octx))
	}
}

// A LeanMutex on the name of a Semaphore or CountDownLatch (a string holding
// a count, not an owner) is ErrWrongKind and leaves the count alone: its
// acquisition took the count for a holder and waited, State reported the
// lock held and ForceUnlock deleted the permits.
func TestLeanMutexOnCountName(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	if ok, err := mustSem(t, c, "sem").TrySetPermits(ctx, 3); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	if ok, err := mustLatch(t, c, "latch").TrySetCount(ctx, 2); err != nil || !ok {
		t.Fatalf("TrySetCount = %v, %v", ok, err)
	}
	for _, name := range []string{"sem", "latch"} {
		plain, fenced := mustLean(t, c, name), mustLean(t, c, name, WithFencing())
		key := plain.Key()
		want := countAt(t, node, key)
		for what, call := range map[string]func() error{
			"TryLock":        func() error { _, err := plain.TryLock(ctx, 0); return err },
			"TryLock(wait)":  func() error { _, err := plain.TryLock(ctx, 50*time.Millisecond); return err },
			"fenced TryLock": func() error { _, err := fenced.TryLock(ctx, 0); return err },
			"shared TryLock": func() error { _, err := plain.TryLock(WithOwner(ctx, "o"), 0); return err },
			"State":          func() error { _, err := plain.State(ctx); return err },
			"IsLocked":       func() error { _, err := plain.IsLocked(ctx); return err },
			"ForceUnlock":    func() error { _, err := plain.ForceUnlock(ctx); return err },
			"fenced Unlock":  func() error { return fenced.Unlock(WithOwner(ctx, "o")) },
		} {
			if err := call(); !errors.Is(err, ErrWrongKind) && !(what == "fenced Unlock" && errors.Is(err, ErrNotHeld)) {
				t.Errorf("LeanMutex.%s on a %s's name: %v, want ErrWrongKind", what, name, err)
			}
			if got := countAt(t, node, key); got != want {
				t.Fatalf("LeanMutex.%s on a %s's name changed its count: %d -> %d", what, name, want, got)
			}
		}
	}
}

// firstSendClient is a rueidis client that notes when the first command
// after arm was handed to it.
type firstSendClient struct {
	rueidis.Client
	mu    sync.Mutex
	armed bool
	at    time.Time
}

func (f *firstSendClient) arm() {
	f.mu.Lock()
	f.armed, f.at = true, time.Time{}
	f.mu.Unlock()
}

func (f *firstSendClient) first() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.at
}

func (f *firstSendClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	f.mu.Lock()
	if f.armed {
		f.armed, f.at = false, time.Now()
	}
	f.mu.Unlock()
	return f.Client.Do(ctx, cmd)
}
