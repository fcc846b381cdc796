package scriptlock

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

func queueLen(t testing.TB, n *redistest.Node, f *FairMutex) int64 {
	t.Helper()
	v, err := n.Do(t, "LLEN", f.queue).AsInt64()
	if err != nil {
		t.Fatalf("LLEN: %v", err)
	}
	return v
}

func waitQueueLen(t testing.TB, n *redistest.Node, f *FairMutex, want int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for queueLen(t, n, f) != want {
		if time.Now().After(deadline) {
			t.Fatalf("queue length %d, want %d", queueLen(t, n, f), want)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestFairMutexReentrant(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 10*time.Second)
	f := mustFair(t, c, "fair:reentrant")
	l1, err := f.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tok, ok := Fence(l1)
	if !ok || tok <= 0 {
		t.Fatalf("Fence = %d, %v", tok, ok)
	}
	l2, err := f.Lock(l1)
	if err != nil {
		t.Fatalf("re-entry: %v", err)
	}
	if st, err := f.State(l1); err != nil || !st.Locked || st.HoldCount != 2 || st.Lease <= 0 {
		t.Fatalf("State = %+v, %v; want locked, 2 holds, a lease", st, err)
	}
	other := WithOwner(ctx, "other")
	if _, err := f.TryLock(other, 50*time.Millisecond); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("other owner: %v, want ErrNotAcquired", err)
	}
	// TryLock waits for its leave until 100 ms past the wait's end, then
	// lets it finish in the background: a loaded machine may need longer.
	if !eventually(2*time.Second, func() bool { return queueLen(t, node, f) == 0 }) {
		t.Fatalf("a waiter that gave up is still queued (%d)", queueLen(t, node, f))
	}
	if err := f.Unlock(other); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Unlock by non-owner: %v", err)
	}
	if err := f.Unlock(l2); err != nil {
		t.Fatal(err)
	}
	if l1.Err() != nil {
		t.Fatal("lock context ended while a hold remains")
	}
	if err := f.Unlock(l1); err != nil {
		t.Fatal(err)
	}
	if context.Cause(l1) != context.Canceled {
		t.Fatalf("cause after last Unlock = %v", context.Cause(l1))
	}
	if locked, _ := f.IsLocked(ctx); locked {
		t.Fatal("still locked")
	}
	l3, err := f.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tok3, _ := Fence(l3); tok3 <= tok {
		t.Fatalf("token %d not above %d", tok3, tok)
	}
	if ok, err := f.ForceUnlock(ctx); err != nil || !ok {
		t.Fatalf("ForceUnlock = %v, %v", ok, err)
	}
	for _, k := range []string{f.Key(), f.queue, f.timeouts} {
		if n, _ := node.Do(t, "EXISTS", k).AsInt64(); n != 0 {
			t.Fatalf("%s left behind", k)
		}
	}
}

func TestFairMutexBadInput(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 5*time.Second)
	if _, err := c.FairMutex(""); !errors.Is(err, ErrInvalidName) {
		t.Fatalf("empty name: %v", err)
	}
	if _, err := c.FairMutex("x", WithWaiterTimeout(time.Millisecond)); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("tiny waiter timeout: %v", err)
	}
	f := mustFair(t, c, "x")
	if _, err := f.TryLock(ctx, -1); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("negative wait: %v", err)
	}
	if _, err := f.LockWithLease(ctx, 0); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("zero lease: %v", err)
	}
	if err := f.Unlock(ctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Unlock unheld: %v", err)
	}
	if n := dbsize(t, node); n != 0 {
		t.Fatalf("bad input wrote %d keys", n)
	}
}

// TestFairMutexFIFO queues 20 owners (spread over 4 Clients) in a known order
// behind a holder and checks that they get the lock in exactly that order.
func TestFairMutexFIFO(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	clients := make([]*Client, 4)
	for i := range clients {
		clients[i] = newTestClient(t, node.Client(t), prefix)
	}
	ctx := testCtx(t, 30*time.Second)
	holder := mustFair(t, clients[0], "fifo")
	hctx, err := holder.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const owners = 20
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i := 0; i < owners; i++ {
		f := mustFair(t, clients[i%len(clients)], "fifo")
		wg.Add(1)
		go func() {
			defer wg.Done()
			octx := WithOwner(ctx, "owner-"+strconv.Itoa(i))
			l, err := f.Lock(octx)
			if err != nil {
				t.Errorf("owner %d: %v", i, err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			time.Sleep(time.Millisecond)
			if err := f.Unlock(l); err != nil {
				t.Errorf("owner %d Unlock: %v", i, err)
			}
		}()
		waitQueueLen(t, node, holder, int64(i+1))
	}
	if err := holder.Unlock(hctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, o := range order {
		if o != i {
			t.Fatalf("acquisition order %v, want 0..%d", order, owners-1)
		}
	}
	if len(order) != owners {
		t.Fatalf("%d acquisitions, want %d", len(order), owners)
	}
}

// TestFairMutexNoBarging: right after an unlock, a newcomer is refused while a
// waiter is queued, and a newcomer that waits gets the lock after it.
func TestFairMutexNoBarging(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	c1 := newTestClient(t, node.Client(t), prefix)
	c2 := newTestClient(t, node.Client(t), prefix)
	c3 := newTestClient(t, node.Client(t), prefix)
	ctx := testCtx(t, 20*time.Second)
	for round := 0; round < 20; round++ {
		holder, queued, newcomer := mustFair(t, c1, "barge"), mustFair(t, c2, "barge"), mustFair(t, c3, "barge")
		hctx, err := holder.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan string, 2)
		release := make(chan struct{})
		go func() {
			l, err := queued.Lock(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			got <- "queued"
			// Hold until the newcomer has tried: a queued waiter that took
			// and gave back the lock before the newcomer's attempt would
			// leave it free for the newcomer by right.
			<-release
			_ = queued.Unlock(l)
		}()
		waitQueueLen(t, node, holder, 1)
		if err := holder.Unlock(hctx); err != nil {
			t.Fatal(err)
		}
		// The lock is free or already handed over: either way not ours.
		if l, err := newcomer.TryLock(ctx, 0); err == nil {
			_ = newcomer.Unlock(l)
			t.Fatalf("round %d: newcomer barged past a queued waiter", round)
		}
		close(release)
		l, err := newcomer.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got <- "newcomer"
		_ = newcomer.Unlock(l)
		if first := <-got; first != "queued" {
			t.Fatalf("round %d: %s got the lock first", round, first)
		}
		<-got
	}
}

// TestFairMutexDeadWaiterEvicted freezes the connection of a queued waiter (a
// process that hangs or is cut off): the waiters behind it still get the lock
// within the eviction bound, in order, and the dead waiter leaves the queue.
func TestFairMutexDeadWaiterEvicted(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	proxy := netproxy.New(t, node.Addr)
	prefix := sharedPrefix(t)
	const waiterTimeout = 600 * time.Millisecond
	opts := []Option{prefix, WithWaiterTimeout(waiterTimeout)}
	holderC := newTestClient(t, node.Client(t), opts...)
	deadC := newTestClient(t, rawClient(t, proxy.Addr), opts...)
	liveC := newTestClient(t, node.Client(t), opts...)
	ctx := testCtx(t, 30*time.Second)

	holder := mustFair(t, holderC, "evict")
	hctx, err := holder.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dctx, dcancel := context.WithCancel(ctx)
	deadDone := make(chan struct{})
	go func() {
		defer close(deadDone)
		// Once thawed at the end, its last call may still reach Redis and
		// take the free lock; release it then.
		if l, err := mustFair(t, deadC, "evict").Lock(dctx); err == nil {
			_ = mustFair(t, deadC, "evict").Unlock(l)
		}
	}()
	waitQueueLen(t, node, holder, 1)
	proxy.Freeze()
	order := make(chan int, 2)
	times := make(chan time.Time, 2)
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		f := mustFair(t, liveC, "evict")
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := f.Lock(WithOwner(ctx, "live-"+strconv.Itoa(i)))
			if err != nil {
				t.Error(err)
				return
			}
			order <- i
			times <- time.Now()
			_ = f.Unlock(l)
		}()
		waitQueueLen(t, node, holder, int64(i+2))
	}
	released := time.Now()
	if err := holder.Unlock(hctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(order)
	close(times)
	if a, b := <-order, <-order; a != 0 || b != 1 {
		t.Fatalf("live waiters acquired in order %d, %d", a, b)
	}
	first := <-times
	// The dead waiter's deadline is at most waiterTimeout after its last call;
	// live waiters call again every waiterTimeout/3.
	bound := waiterTimeout + waiterTimeout/3 + 300*time.Millisecond
	if took := first.Sub(released); took > bound {
		t.Fatalf("first live waiter waited %s after the release, bound %s", took, bound)
	}
	t.Logf("live waiter acquired %s after the release (bound %s)", first.Sub(released).Round(time.Millisecond), bound)
	if q := queueLen(t, node, holder); q != 0 {
		t.Fatalf("queue length %d after eviction", q)
	}
	dcancel()
	proxy.Thaw()
	<-deadDone
}

// TestFairMutexLiveWaiterKept: a waiter that keeps waiting far longer than the
// waiter timeout keeps its place ahead of a later one.
func TestFairMutexLiveWaiterKept(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	// A waiter calls again every third of the timeout; one that misses two
	// calls in a row is evicted. With 600 ms that takes a 400 ms stall, which
	// a machine running the race detector and other test packages beside this
	// one does not reach (at 150 ms, 100 ms stalls sent the early waiter to the
	// back of the line).
	const waiterTimeout = 600 * time.Millisecond
	opts := []Option{prefix, WithWaiterTimeout(waiterTimeout)}
	c1 := newTestClient(t, node.Client(t), opts...)
	c2 := newTestClient(t, node.Client(t), opts...)
	c3 := newTestClient(t, node.Client(t), opts...)
	ctx := testCtx(t, 20*time.Second)
	holder := mustFair(t, c1, "kept")
	hctx, err := holder.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	order := make(chan string, 2)
	var wg sync.WaitGroup
	for _, w := range []struct {
		name string
		c    *Client
	}{{"early", c2}, {"late", c3}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := mustFair(t, w.c, "kept")
			l, err := f.Lock(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			order <- w.name
			_ = f.Unlock(l)
		}()
		waitQueueLen(t, node, holder, map[string]int64{"early": 1, "late": 2}[w.name])
	}
	time.Sleep(4 * waiterTimeout)
	if q := queueLen(t, node, holder); q != 2 {
		t.Fatalf("queue length %d while both waiters live, want 2", q)
	}
	if err := holder.Unlock(hctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if a := <-order; a != "early" {
		t.Fatalf("%s waiter went first", a)
	}
}

// TestFairMutexServerClock: deadlines in the timeout set come from the
// server's clock (TIME inside the script), not from the client's, so a client
// whose clock is minutes off neither evicts live waiters nor is evicted.
func TestFairMutexServerClock(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), WithWaiterTimeout(2*time.Second))
	ctx := testCtx(t, 10*time.Second)
	f := mustFair(t, c, "clock")
	hctx, err := f.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.TryLock(WithOwner(ctx, "w"), 0); err == nil {
		t.Fatal("acquired a held lock")
	}
	if q := queueLen(t, node, f); q != 0 {
		t.Fatal("TryLock with no wait queued the caller")
	}
	// Queued long enough for the score to be read on a loaded machine.
	wctx, cancel := context.WithTimeout(WithOwner(ctx, "w"), time.Second)
	defer cancel()
	go func() { _, _ = f.Lock(wctx) }()
	waitQueueLen(t, node, f, 1)
	score, err := node.Do(t, "ZSCORE", f.timeouts, c.ID()+":w").AsFloat64()
	if err != nil {
		t.Fatal(err)
	}
	tm, err := node.Do(t, "TIME").AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	sec, _ := strconv.ParseInt(tm[0], 10, 64)
	usec, _ := strconv.ParseInt(tm[1], 10, 64)
	serverNow := sec*1000 + usec/1000
	if d := int64(score) - serverNow; d < 1500 || d > 2100 {
		t.Fatalf("deadline is server time + %d ms, want about 2000", d)
	}
	<-wctx.Done()
	waitQueueLen(t, node, f, 0)
	if err := f.Unlock(hctx); err != nil {
		t.Fatal(err)
	}
}

func TestFairMutexCluster(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3)
	prefix := sharedPrefix(t)
	c1 := newTestClient(t, cl.Client(t), prefix)
	c2 := newTestClient(t, cl.Client(t), prefix)
	c3 := newTestClient(t, cl.Client(t), prefix)
	ctx := testCtx(t, 30*time.Second)
	for _, name := range []string{"order:1", "order:2", "user:{42}:wallet", "x"} {
		f1, f2, f3 := mustFair(t, c1, name), mustFair(t, c2, name), mustFair(t, c3, name)
		l1, err := f1.Lock(ctx)
		if err != nil {
			t.Fatalf("%s: Lock: %v", name, err)
		}
		got := make(chan string, 2)
		var wg sync.WaitGroup
		for i, f := range []*FairMutex{f2, f3} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l, err := f.Lock(ctx)
				if err != nil {
					t.Errorf("%s: %v", name, err)
					return
				}
				got <- strconv.Itoa(i)
				_ = f.Unlock(l)
			}()
			node := cl.NodeFor(t, f1.queue)
			waitQueueLen(t, node, f1, int64(i+1))
		}
		start := time.Now()
		if err := f1.Unlock(l1); err != nil {
			t.Fatalf("%s: Unlock: %v", name, err)
		}
		wg.Wait()
		if time.Since(start) > 2*time.Second {
			t.Fatalf("%s: hand-off took %s: waiters not woken by their sharded channel", name, time.Since(start))
		}
		if a, b := <-got, <-got; a != "0" || b != "1" {
			t.Fatalf("%s: order %s, %s", name, a, b)
		}
	}
}

// TestFairMutexQueueExpires: a queue whose only waiter died (its process
// frozen, as after a crash or a failover) does not stay in Redis forever: its
// keys expire within the waiter timeout even when no one calls again.
func TestFairMutexQueueExpires(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	proxy := netproxy.New(t, node.Addr)
	prefix := sharedPrefix(t)
	const waiterTimeout = 800 * time.Millisecond
	opts := []Option{prefix, WithWaiterTimeout(waiterTimeout)}
	holderC := newTestClient(t, node.Client(t), opts...)
	deadC := newTestClient(t, rawClient(t, proxy.Addr), opts...)
	ctx := testCtx(t, 30*time.Second)

	holder := mustFair(t, holderC, "queue-expires")
	hctx, err := holder.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Unlock(hctx) }()
	dctx, dcancel := context.WithCancel(ctx)
	deadDone := make(chan struct{})
	go func() {
		defer close(deadDone)
		if l, err := mustFair(t, deadC, "queue-expires").Lock(dctx); err == nil {
			_ = mustFair(t, deadC, "queue-expires").Unlock(l)
		}
	}()
	waitQueueLen(t, node, holder, 1)
	proxy.Freeze()
	defer func() {
		dcancel()
		proxy.Thaw()
		<-deadDone
	}()
	for _, k := range []string{holder.queue, holder.timeouts} {
		ttl, err := node.Do(t, "PTTL", k).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		// -2: the key has already expired (a loaded machine can take longer
		// than the waiter timeout between the freeze and this read); the
		// loop below still requires both keys gone in time. -1 (no expiry)
		// or a TTL past the waiter timeout fails.
		if ttl == -1 || ttl < -2 || ttl > waiterTimeout.Milliseconds() {
			t.Fatalf("PTTL %s = %d ms, want 0 <= PTTL <= %d (or gone)", k, ttl, waiterTimeout.Milliseconds())
		}
	}
	deadline := time.Now().Add(waiterTimeout + 2*time.Second)
	for {
		n, err := node.Do(t, "EXISTS", holder.queue, holder.timeouts).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d queue keys still there %s after the only waiter stopped calling", n, waiterTimeout+2*time.Second)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A retried release reads the first attempt's outcome from its latch (for a
// re-entrant release, and for a last release the caller cannot vouch for); a
// vouched last release writes no latch, and its retry that finds the owner
// gone answers released.
func TestFairMutexReleaseLatch(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 5*time.Second)
	f := mustFair(t, c, "latch")
	latch := f.m.latch + ":req-"
	release := func(field, id string, retry, vouched bool) int64 {
		t.Helper()
		st, err := f.releaseCall(ctx, releaseCall{latch: latch + id, lease: time.Minute, publish: "publish", latchTTL: time.Minute, retry: retry, vouched: vouched}, field)
		if err != nil {
			t.Fatalf("release %s: %v", id, err)
		}
		return st
	}
	for _, vouched := range []bool{false, true} {
		lctx, err := f.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Lock(lctx); err != nil {
			t.Fatal(err)
		}
		field := c.id + ":" + ownerIn(lctx)
		id := strconv.FormatBool(vouched) + "-"
		if st := release(field, id+"1", false, vouched); st != 1 {
			t.Fatalf("vouched %v: re-entrant release = %d, want 1 (still held)", vouched, st)
		}
		if st := release(field, id+"1", true, vouched); st != 1 {
			t.Fatalf("vouched %v: retried re-entrant release = %d, want the first outcome 1", vouched, st)
		}
		if st, _ := f.State(lctx); st.HoldCount != 1 {
			t.Fatalf("vouched %v: the retry released a second hold: %d left, want 1", vouched, st.HoldCount)
		}
		if st := release(field, id+"2", false, vouched); st != 2 {
			t.Fatalf("vouched %v: last release = %d, want 2 (released)", vouched, st)
		}
		if latched := exists(t, node, latch+id+"2"); latched == vouched {
			t.Fatalf("vouched %v: last release left a latch: %v", vouched, latched)
		}
		if st := release(field, id+"2", true, vouched); st != 2 {
			t.Fatalf("vouched %v: retried last release = %d, want the first outcome 2", vouched, st)
		}
		if st := release(field, id+"3", true, false); st != 0 {
			t.Fatalf("vouched %v: an unvouched new release of a free lock = %d, want 0 (not held)", vouched, st)
		}
		f.m.c.finish(lctx.Value(lockCtxKey{}).(*lockCtx).hold, context.Canceled)
	}
	keys, _ := node.Do(t, "KEYS", "*").AsStrSlice()
	for _, k := range keys {
		if k != latch+"false-1" && k != latch+"false-2" && k != latch+"true-1" && k != f.m.fence {
			t.Errorf("key %s left behind", k)
		}
	}
}

// A FairMutex handle names its keys exactly as Mutex and fairKeys do.
func TestFairMutexKeyNames(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	for _, name := range []string{"order:1", "{tag}order", "a{b}c"} {
		for _, redisson := range []bool{false, true} {
			var opts []LockOption
			if redisson {
				opts = append(opts, WithRedissonFairQueue(time.Second))
			}
			f := mustFair(t, c, name, opts...)
			m := mustMutex(t, c, name)
			queue, timeouts := fairKeys(m.key, redisson)
			if f.m.key != m.key || f.m.channel != m.channel || f.m.fence != m.fence || f.m.latch != m.latch || f.queue != queue || f.timeouts != timeouts {
				t.Errorf("%q (Redisson queue %v): got %q %q %q %q %q %q, want %q %q %q %q %q %q", name, redisson,
					f.m.key, f.m.channel, f.m.fence, f.m.latch, f.queue, f.timeouts,
					m.key, m.channel, m.fence, m.latch, queue, timeouts)
			}
		}
	}
	if _, err := c.FairMutex(""); !errors.Is(err, ErrInvalidName) {
		t.Fatalf("empty name: %v", err)
	}
}

// A FairMutex release (our queue protocol) names the next waiter, "0:<field>",
// on that waiter's client's wake channel, not on a channel of the waiter's
// own: a client that waits for the lock again and again keeps one
// subscription open (it lingers after each acquisition) instead of
// subscribing and unsubscribing around every wait.
func TestFairWakeByName(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	opts := []Option{sharedPrefix(t), WithWaiterTimeout(30 * time.Second)} // fallback 10 s: only a message is in time
	ctx := testCtx(t, 30*time.Second)
	holder := mustFair(t, newTestClient(t, node.Client(t), opts...), "byname")
	wc := newTestClient(t, node.Client(t), opts...)
	waiter := mustFair(t, wc, "byname")
	ownWake := waiter.wake + ":" + wc.ID()
	msgs := listen(t, node, ownWake)
	numsub := func(channel string) int64 { return subscribers(t, node, false, channel) }
	for round := range 2 {
		owner := "w" + strconv.Itoa(round)
		field := wc.ID() + ":" + owner
		l, err := holder.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		go func() {
			wl, err := waiter.Lock(WithOwner(ctx, owner))
			if err == nil {
				err = waiter.Unlock(wl)
			}
			got <- err
		}()
		waitFor(t, 5*time.Second, "the waiter to queue and listen", func() bool {
			n, _ := node.Do(t, "LLEN", waiter.queue).AsInt64()
			return n == 1 && numsub(ownWake) == 2
		})
		if n := numsub(waiter.m.channel + ":" + field); n != 0 {
			t.Fatalf("round %d: %d subscribers on the waiter's own channel, want none", round, n)
		}
		before := commandCalls(t, node)
		start := time.Now()
		if err := holder.Unlock(l); err != nil {
			t.Fatal(err)
		}
		if m := msgs.next(t, 5*time.Second); m != ownWake+" 0:"+field {
			t.Fatalf("round %d: release sent %q, want the waiter named on its client's channel", round, m)
		}
		select {
		case err := <-got:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("round %d: the named waiter did not get the lock within 5s", round)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("round %d: hand-off took %s", round, d)
		}
		// The release checks the head's deadline; the head's own call,
		// which takes the lock, checks neither its deadline nor the lock
		// twice.
		after := commandCalls(t, node)
		if n, m := after["zscore"]-before["zscore"], after["exists"]-before["exists"]; n != 1 || m != 1 {
			t.Fatalf("round %d: the hand-off ran ZSCORE %d and EXISTS %d times, want 1 and 1", round, n, m)
		}
		// Its subscription lingers for the next wait.
		if n := numsub(ownWake); n != 2 {
			t.Fatalf("round %d: %d subscribers on the waiter's client's channel after its hold, want 2 (it lingers)", round, n)
		}
	}
}

// TestFairRefusalWhileHeld: a caller refused a held lock queues without
// reading anyone's deadline (the release evicts dead waiters before it wakes
// the next), with one PEXPIRE per queue key and no PTTL of them, and a short
// waiter timeout never shortens the expiry a longer one set.
func TestFairRefusalWhileHeld(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), sharedPrefix(t))
	ctx := testCtx(t, 10*time.Second)
	f := mustFair(t, c, "refusal")
	hctx, err := f.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	refuse := func(field string, waiterTimeout time.Duration) {
		t.Helper()
		r, err := generated.FairAcquire(ctx, c.rc, f.m.key, f.queue, f.timeouts, f.m.fence, f.wake,
			time.Minute, field, fairAcquireCtl(true, false, waiterTimeout, time.Hour), "publish")
		if err != nil {
			t.Fatalf("%s: %v", field, err)
		}
		if r >= 0 {
			t.Fatalf("%s: reply %d on a held lock, want a refusal", field, r)
		}
	}
	pttl := func(key string) int64 {
		t.Helper()
		ms, err := node.Do(t, "PTTL", key).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	// The head's deadline passes while the lock is held; the queue keys
	// live on: queued with a minute's timeout first, which the keys' expiry
	// takes, then called again with a second's, which moves its deadline
	// only. Queued with a second's at once, a slow machine could let the
	// keys expire before the test lengthened their expiry.
	refuse("x:dead", time.Minute)
	refuse("x:dead", time.Second)
	refuse("x:live", time.Minute)
	time.Sleep(1200 * time.Millisecond)
	before := commandCalls(t, node)
	refuse("x:next", time.Minute)
	after := commandCalls(t, node)
	for cmd, want := range map[string]int64{"zscore": 0, "time": 1, "pttl": 1, "pexpire": 2, "zadd": 1, "rpush": 1} {
		if n := after[cmd] - before[cmd]; n != want {
			t.Errorf("a refusal behind others ran %s %d times, want %d", cmd, n, want)
		}
	}
	refuse("x:short", time.Second)
	for _, k := range []string{f.queue, f.timeouts} {
		if ms := pttl(k); ms < 50_000 {
			t.Errorf("PTTL %s = %d ms after a 1s waiter queued behind 1m ones, want about 60000", k, ms)
		}
	}
	if q := queueLen(t, node, f); q != 4 {
		t.Fatalf("queue length %d while the lock is held, want 4 (the dead waiter is left to the release)", q)
	}
	if err := f.Unlock(hctx); err != nil {
		t.Fatal(err)
	}
	head, err := node.Do(t, "LINDEX", f.queue, "0").ToString()
	if err != nil || head != "x:live" {
		t.Fatalf("head after the release = %q (%v), want x:live: the release evicts the dead waiter", head, err)
	}
}

// A Redisson-queue waiter whose timeout entry is gone (removed by hand)
// does not stop the next caller from queueing behind it: its estimate
// starts from the holder's lease.
func TestFairRedissonQueueEntryWithoutTimeout(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := node.Client(t)
	c := newTestClient(t, rc)
	ctx := testCtx(t, 20*time.Second)
	f := mustFair(t, c, "ghost-queue", WithRedissonFairQueue(time.Second))
	hctx, err := f.Lock(WithOwner(ctx, "holder"))
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Do(ctx, rc.B().Rpush().Key(f.queue).Element("0f0e0d0c-0000-4000-8000-000000000000:1").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = f.TryLock(WithOwner(ctx, "waiter"), 300*time.Millisecond)
	if !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("TryLock behind a queued field with no timeout: %v after %v; want ErrNotAcquired when the wait runs out", err, time.Since(start).Round(time.Millisecond))
	}
	if err := f.Unlock(hctx); err != nil {
		t.Fatal(err)
	}
}
