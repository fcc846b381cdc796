package scriptlock

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Well under the 2 s fallback poll: a waiter stranded until its poll fails,
// with room for a loaded 2-core machine.
const countedBound = 700 * time.Millisecond

// A release of a PermitSemaphore wakes one of two local waiters, which takes
// the permit with a short lease and keeps it. No message announces that
// lease ending: the other waiter, which the release did not wake, last heard
// of a lease a minute long, and must still take the permit when the short
// one ends, not at its fallback poll.
func TestPermitShortLeaseAfterCountedWake(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	p := mustPermits(t, c, "short-lease")
	if _, err := p.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	held, err := p.Acquire(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	const lease = 150 * time.Millisecond
	got := make(chan time.Time, 2)
	base := acquireCalls(t, node)
	for i := range 2 {
		go func() {
			if _, err := p.Acquire(ctx, lease); err != nil && ctx.Err() == nil {
				t.Error(err)
			}
			got <- time.Now()
		}()
		settleWaiters(t, node, c, p.channel, i+1, base, int64(2*(i+1)))
	}
	if err := p.Release(ctx, held); err != nil {
		t.Fatal(err)
	}
	var first time.Time
	select {
	case first = <-got:
	case <-time.After(countedBound):
		t.Fatalf("no waiter acquired within %s of the release", countedBound)
	}
	select {
	case second := <-got:
		t.Logf("second waiter acquired %s after the first, whose lease was %s", second.Sub(first).Round(time.Millisecond), lease)
	case <-time.After(lease + countedBound):
		t.Fatalf("the first waiter's %s lease ended; the other waiter did not acquire within %s of its acquisition", lease, lease+countedBound)
	}
}

type heldAttemptKey struct{}

// givingUp holds an attempt until its caller has given up: cancel has
// returned. A cancelled context closes its Done before it cancels the
// contexts derived from it, the attempt's own among them, so an attempt let
// go at Done alone may still run uncancelled and take what it was after.
type givingUp struct {
	once   sync.Once
	cancel context.CancelFunc
	done   chan struct{}
}

func newGivingUp(cancel context.CancelFunc) *givingUp {
	return &givingUp{cancel: cancel, done: make(chan struct{})}
}

// giveUp cancels the caller's context (once), then lets held attempts go.
func (g *givingUp) giveUp() { g.once.Do(func() { g.cancel(); close(g.done) }) }

// hold blocks the attempt until giveUp has cancelled its context.
func (g *givingUp) hold() { <-g.done }

// A PermitSemaphore's AddPermits announces the permits it added, not the
// count: two AddPermits(1) in a row announce 1 each. A waiter woken by the
// first is counted again by the second while its attempt is on its way, and
// its caller gives up before the attempt runs: the waiter holds the wakes of
// both, and both must reach the waiters behind it, each of which takes one
// of the two permits at once rather than at its fallback poll.
func TestPermitAddPermitsWakesSurviveWaiterLeaving(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	p := mustPermits(t, c, "add-leave")
	if _, err := p.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Acquire(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	xctx, cancelX := context.WithCancel(context.WithValue(ctx, heldAttemptKey{}, true))
	x := newGivingUp(cancelX)
	defer x.giveUp()
	var armed atomic.Bool
	entered := make(chan struct{}, 1)
	c.setAttemptHook(func(ctx context.Context, after bool) {
		if after || ctx.Value(heldAttemptKey{}) == nil || !armed.CompareAndSwap(true, false) {
			return
		}
		entered <- struct{}{}
		x.hold() // the attempt is on its way when its caller gives up
	})
	t.Cleanup(func() { c.setAttemptHook(nil) })
	got := make(chan time.Time, 2)
	base := acquireCalls(t, node)
	xdone := make(chan error, 1)
	go func() {
		_, err := p.Acquire(xctx, time.Minute)
		xdone <- err
	}()
	settleWaiters(t, node, c, p.channel, 1, base, 2)
	for i := range 2 {
		go func() {
			if _, err := p.Acquire(ctx, time.Minute); err != nil && ctx.Err() == nil {
				t.Error(err)
			}
			got <- time.Now()
		}()
		settleWaiters(t, node, c, p.channel, i+2, base, int64(2*(i+2)))
	}
	armed.Store(true)
	if _, err := p.AddPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-entered:
	case <-time.After(countedBound):
		t.Fatalf("the first waiter was not woken within %s of AddPermits(1)", countedBound)
	}
	if _, err := p.AddPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	// The second message reaches the first waiter, whose attempt is held.
	first := func() *waiter {
		c.subs.mu.Lock()
		defer c.subs.mu.Unlock()
		return c.subs.chans[p.channel].waiters[0]
	}()
	for deadline := time.Now().Add(countedBound); ; {
		c.subs.mu.Lock()
		n := len(first.wake)
		c.subs.mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the second AddPermits(1) did not reach the first waiter within %s", countedBound)
		}
		time.Sleep(time.Millisecond)
	}
	at := time.Now()
	x.giveUp()
	if err := <-xdone; err == nil {
		t.Fatal("the waiter that gave up acquired")
	}
	for i := range 2 {
		select {
		case <-got:
		case <-time.After(countedBound):
			t.Fatalf("2 permits added, the waiter woken by both gave up: %d of the 2 waiters behind it acquired within %s (available: %d)", i, countedBound, countAt(t, node, p.Key()))
		}
	}
	t.Logf("both waiters behind acquired within %s", time.Since(at).Round(time.Millisecond))
}

// startWaiters starts one goroutine per entry of ns, in order, each taking
// that many permits of s, and waits until each is registered, so they wait
// in that order; a goroutine sends its n on got once it acquired, and is
// counted in wg (nil: none).
func startWaiters(t *testing.T, ctx context.Context, node *redistest.Node, c *Client, s *Semaphore, wg *sync.WaitGroup, got chan<- int64, ns ...int64) {
	t.Helper()
	base := acquireCalls(t, node)
	have := waitersOn(c, s.channel)
	for i, n := range ns {
		if wg != nil {
			wg.Add(1)
		}
		go func() {
			if wg != nil {
				defer wg.Done()
			}
			if err := s.Acquire(ctx, n); err != nil && ctx.Err() == nil {
				t.Error(err)
			}
			got <- n
		}()
		settleWaiters(t, node, c, s.channel, have+i+1, base, int64(2*(i+1)))
	}
}

// expectAcquired waits for k acquisitions on got, each within countedBound.
func expectAcquired(t *testing.T, got <-chan int64, k int, what string) {
	t.Helper()
	for i := range k {
		select {
		case <-got:
		case <-time.After(countedBound):
			t.Fatalf("%s: %d of %d waiters acquired within %s", what, i, k, countedBound)
		}
	}
}

// Release(3) to three waiters wanting one permit each on one Client wakes
// all three.
func TestSemaphoreReleaseManyWakesMany(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	s := mustSem(t, c, "release-many")
	got := make(chan int64, 3)
	startWaiters(t, ctx, node, c, s, nil, got, 1, 1, 1)
	if err := s.Release(ctx, 3); err != nil {
		t.Fatal(err)
	}
	expectAcquired(t, got, 3, "released 3")
}

// Two Clients of one process with two waiters each hear one message of a
// Redisson release (its script: INCRBY, then PUBLISH of the new count): each
// wakes its own share, and all four acquire.
func TestSemaphoreTwoClientsRedissonMessage(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	c1 := newTestClient(t, node.Client(t), prefix)
	c2 := newTestClient(t, node.Client(t), prefix)
	ctx := testCtx(t, 30*time.Second)
	s1, s2 := mustSem(t, c1, "two-clients"), mustSem(t, c2, "two-clients")
	got := make(chan int64, 4)
	startWaiters(t, ctx, node, c1, s1, nil, got, 1, 1)
	startWaiters(t, ctx, node, c2, s2, nil, got, 1, 1)
	node.Do(t, "EVAL", "local v = redis.call('incrby', KEYS[1], ARGV[1]); redis.call('publish', KEYS[2], v)", "2", s1.Key(), s1.channel, "4")
	expectAcquired(t, got, 4, "a Redisson release of 4")
}

// A waiter wanting 1 behind one wanting 3, its attempt on its way (it ran
// before the release, refused, and its reply is late): the release's wake
// goes to the waiter wanting 3, which is refused with a permit free and
// passes it to the one wanting 1, whose late refusal must not swallow it.
func TestSemaphoreSmallWaiterInFlightGetsPassedWake(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	s := mustSem(t, c, "in-flight")
	var armed atomic.Bool
	refused, resume := make(chan struct{}, 1), make(chan struct{})
	c.setAttemptHook(func(ctx context.Context, after bool) {
		if !after || ctx.Value(heldAttemptKey{}) == nil || !armed.CompareAndSwap(true, false) {
			return
		}
		refused <- struct{}{}
		<-resume
	})
	t.Cleanup(func() { c.setAttemptHook(nil) })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() }) // before the hook goes
	got := make(chan int64, 2)
	startWaiters(t, ctx, node, c, s, &wg, got, 3)
	wg.Add(1)
	sctx := context.WithValue(ctx, heldAttemptKey{}, true)
	base := acquireCalls(t, node)
	go func() {
		defer wg.Done()
		if err := s.Acquire(sctx, 1); err != nil && ctx.Err() == nil {
			t.Error(err)
		}
		got <- 1
	}()
	settleWaiters(t, node, c, s.channel, 2, base, 2)
	// Wake both (a message whose permits someone else took): the one
	// wanting 1 is refused, and its reply held.
	armed.Store(true)
	node.Do(t, "PUBLISH", s.channel, "2")
	select {
	case <-refused:
	case <-time.After(countedBound):
		t.Fatal("the waiter wanting 1 was not woken")
	}
	time.Sleep(20 * time.Millisecond) // the one wanting 3 is back asleep
	if err := s.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the wake was passed on
	close(resume)
	select {
	case n := <-got:
		if n != 1 {
			t.Fatalf("a waiter wanting %d acquired one permit", n)
		}
	case <-time.After(countedBound):
		t.Fatalf("released 1 while the waiter wanting 1 had an attempt on its way: it did not acquire within %s (available: %d)", countedBound, countAt(t, node, s.Key()))
	}
}

// PermitSemaphore.SetPermits raising the total announces the new total,
// which is never below the permits it frees: every waiter they fit wakes.
func TestPermitSetPermitsRaisingWakesAll(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	p := mustPermits(t, c, "set-raise")
	if _, err := p.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Acquire(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	got := make(chan int64, 3)
	base := acquireCalls(t, node)
	for i := range 3 {
		go func() {
			if _, err := p.Acquire(ctx, time.Minute); err != nil && ctx.Err() == nil {
				t.Error(err)
			}
			got <- 1
		}()
		settleWaiters(t, node, c, p.channel, i+1, base, int64(2*(i+1)))
	}
	if err := p.SetPermits(ctx, 4); err != nil {
		t.Fatal(err)
	}
	expectAcquired(t, got, 3, "SetPermits(4) with 1 held")
}

// A woken waiter whose caller gives up before its attempt runs hands the
// wake to the waiter behind it.
func TestSemaphoreWokenWaiterGivingUpPassesWake(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	s := mustSem(t, c, "give-up")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	xctx, cancelX := context.WithCancel(context.WithValue(ctx, heldAttemptKey{}, true))
	x := newGivingUp(cancelX)
	defer x.giveUp()
	var armed atomic.Bool
	entered := make(chan struct{}, 1)
	c.setAttemptHook(func(ctx context.Context, after bool) {
		if after || ctx.Value(heldAttemptKey{}) == nil || !armed.CompareAndSwap(true, false) {
			return
		}
		entered <- struct{}{}
		x.hold()
	})
	t.Cleanup(func() { c.setAttemptHook(nil) })
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() }) // before the hook goes
	base := acquireCalls(t, node)
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := s.Acquire(xctx, 1); err == nil {
			t.Error("the waiter that gave up acquired")
		}
	}()
	settleWaiters(t, node, c, s.channel, 1, base, 2)
	got := make(chan int64, 1)
	startWaiters(t, ctx, node, c, s, &wg, got, 1)
	armed.Store(true)
	if err := s.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-entered:
	case <-time.After(countedBound):
		t.Fatal("the first waiter was not woken")
	}
	x.giveUp()
	expectAcquired(t, got, 1, "the woken waiter gave up")
}

// Messages that announce no permit free wake nobody (AddPermits leaving a
// deficit, its release back to 0); the release that frees one wakes a
// waiter; after DrainPermits and Delete, which announce nothing, the
// TrySetPermits that sets the count again wakes the next.
func TestSemaphoreCountedWakeAfterDeficitAndDelete(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	s := mustSem(t, c, "deficit")
	got := make(chan int64, 2)
	startWaiters(t, ctx, node, c, s, nil, got, 1, 1)
	if _, err := s.AddPermits(ctx, -2); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	expectAcquired(t, got, 1, "released 1 after a deficit of 2 was made up")
	if _, err := s.DrainPermits(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.TrySetPermits(ctx, 1); err != nil || !ok {
		t.Fatalf("TrySetPermits after Delete = %v, %v", ok, err)
	}
	expectAcquired(t, got, 1, "TrySetPermits(1) after Delete")
	select {
	case <-got:
		t.Fatal("a third acquisition with no permits")
	default:
	}
}

// Extend can shorten a permit's lease, and nothing announces the new end: a
// waiter of the Client that extended it, which heard of the longer lease,
// takes the permit when the short one ends, not at its fallback poll.
func TestPermitExtendShorterWakesWaiter(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	p := mustPermits(t, c, "extend-shorter")
	if _, err := p.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	held, err := p.Acquire(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	base := acquireCalls(t, node)
	got := acquiredAt(t, ctx, p)
	settleWaiters(t, node, c, p.channel, 1, base, 2)
	const lease = 100 * time.Millisecond
	if err := p.Extend(ctx, held, lease); err != nil {
		t.Fatal(err)
	}
	select {
	case <-got:
	case <-time.After(lease + countedBound):
		t.Fatalf("a held permit's lease was cut to %s by Extend; the waiter did not acquire within %s", lease, lease+countedBound)
	}
}
