package scriptlock

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A re-entry with a longer explicit lease, then its Unlock: the release sets
// the lock's expiry back to the hold's own (shorter) lease, so the loss
// deadline must come back with it, or the context outlives the lock and
// another owner takes it meanwhile.
func TestReentryUnlockShortensLoss(t *testing.T) {
	t.Parallel()
	for _, lc := range lockCases {
		if !lc.reentrant() {
			continue
		}
		t.Run(lc.name, func(t *testing.T) {
			node := redistest.Server(t)
			c := newTestClient(t, node.Client(t))
			l := lc.make(t, c, "reenter-long")
			// The outer lease must outlast the re-entry and its Unlock on a
			// loaded machine (a first call also loads the scripts), or the
			// outer context ends first and the re-entry is refused.
			warm(t, l)
			const lease = 2 * time.Second
			ctx := testCtx(t, 20*time.Second)
			outer, err := lc.withLease(l, ctx, lease)
			if err != nil {
				t.Fatal(err)
			}
			inner, err := lc.withLease(l, outer, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Unlock(inner); err != nil {
				t.Fatal(err)
			}
			time.Sleep(lease + 300*time.Millisecond) // past the lease the release set again
			other, err := l.TryLock(testCtx(t, 5*time.Second), 0)
			if err == nil {
				defer l.Unlock(other)
				if outer.Err() == nil {
					t.Fatalf("another owner holds the lock while the first owner's context is alive (its loss deadline is %s away)",
						time.Until(monoTime(outer.Value(lockCtxKey{}).(*lockCtx).hold.lossAt.Load())).Round(time.Millisecond))
				}
			}
		})
	}
}

// The same with a watchdog hold re-entered with a longer explicit lease: the
// re-entry's Unlock sets the watchdog's lease again, and when renewals stop
// arriving the context must end before the lock expires.
func TestWatchdogReentryUnlockShortensLoss(t *testing.T) {
	t.Parallel()
	p := newProxied(t, WithWatchdog(time.Second, 300*time.Millisecond))
	m := mustMutex(t, p.c, "wd-reenter")
	warm(t, m)
	ctx := testCtx(t, 20*time.Second)
	outer, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	inner, err := m.LockWithLease(outer, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(inner); err != nil { // the lock's expiry is 1 s again
		t.Fatal(err)
	}
	p.px.Freeze() // renewals no longer arrive
	defer p.px.Thaw()
	if !eventually(3*time.Second, func() bool { return !exists(t, p.node, m.key) }) {
		t.Fatal("the lock did not expire on the server")
	}
	if outer.Err() == nil {
		// A loss deadline past the expiry is wrong. One already passed is
		// right, its timer late on a loaded machine: the context must
		// still end soon.
		if d := time.Until(monoTime(outer.Value(lockCtxKey{}).(*lockCtx).hold.lossAt.Load())); d > 0 {
			t.Fatalf("the lock expired on the server while its context is alive (its loss deadline is %s away)", d.Round(time.Millisecond))
		}
		select {
		case <-outer.Done():
		case <-time.After(time.Second):
			t.Fatal("the lock expired on the server and its context is alive a second after its loss deadline passed")
		}
	}
}

// Extend to a shorter lease whose reply is slow: the server applies the new
// lease when the script runs, so the loss deadline must move before the call,
// not when its reply arrives.
func TestExtendShorterSlowReply(t *testing.T) {
	t.Parallel()
	p := newProxied(t)
	m := mustMutex(t, p.c, "ext-slow-reply")
	other := mustMutex(t, newTestClient(t, p.node.Client(t), WithKeyPrefix(p.c.cfg.prefix)), "ext-slow-reply")
	ctx := testCtx(t, 30*time.Second)
	const long, short = 20 * time.Second, 300 * time.Millisecond
	lctx, err := m.LockWithLease(ctx, long)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Extend(ctx, lctx, long); err != nil { // script loaded
		t.Fatal(err)
	}
	p.px.FreezeReplies()
	done := make(chan error, 1)
	go func() {
		actx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		done <- m.Extend(actx, lctx, short)
	}()
	time.Sleep(short + 300*time.Millisecond)
	octx, err := other.TryLock(testCtx(t, 5*time.Second), 0)
	alive := lctx.Err() == nil
	p.px.Thaw()
	<-done
	if err == nil {
		defer other.Unlock(octx)
		if alive {
			t.Fatal("another Client holds the lock while the extending owner's lock context is alive")
		}
	}
}

// gatedMutex is a Mutex whose next release, once armed, waits for gate: a
// release call slow to reach the server.
type gatedMutex struct {
	*Mutex
	armed   atomic.Bool
	entered chan struct{}
	gate    chan struct{}
}

func (g *gatedMutex) releaseOnce(ctx context.Context, field string, r releaseCall) (releaseStatus, time.Duration, error) {
	if g.armed.CompareAndSwap(true, false) {
		close(g.entered)
		<-g.gate
	}
	return g.Mutex.releaseOnce(ctx, field, r)
}

// A hold of a shared owner reaches its loss deadline; the undo that gives
// back what a renewal or Extend in flight may have extended sends a release, which
// reaches the server only after the hold expired there and the owner locked
// again. It must leave that new hold alone (it names the ended hold's
// fencing token).
func TestExpiredUndoSparesNewHold(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	other := mustMutex(t, newTestClient(t, node.Client(t), WithKeyPrefix(c.cfg.prefix)), "expired-undo")
	m := mustMutex(t, c, "expired-undo")
	g := &gatedMutex{Mutex: m, entered: make(chan struct{}), gate: make(chan struct{})}
	ctx := WithOwner(testCtx(t, 20*time.Second), "job-42")
	warmShared(t, m)
	// Long enough that the key's expiry is moved and the undo's release
	// gated before the loss deadline, on a loaded machine too.
	const lease = 2 * time.Second
	lctx1, err := c.acquire(ctx, g, -1, lease)
	if err != nil {
		t.Fatal(err)
	}
	// An Extend has set the lock's expiry since the grant: what it set is
	// the undo's to give back (a hold only its grant set is left to expire).
	if err := c.extend(ctx, lctx1, g, lease); err != nil {
		t.Fatal(err)
	}
	// The server lease outlasts the loss deadline, as one a renewal or
	// Extend in flight set would: the undo finds the hold there and sends
	// its release. (With the lease the Extend set, it ends a drift margin
	// after the deadline, and an undo slower than that on a loaded machine
	// finds nothing to give back.)
	node.Do(t, "PEXPIRE", m.key, "20000")
	g.armed.Store(true)
	<-lctx1.Done() // the loss deadline: the undo starts
	select {
	case <-g.entered:
	case <-time.After(3 * time.Second):
		t.Fatal("no undo release after the loss deadline")
	}
	node.Do(t, "DEL", m.key)  // the first hold expires on the server
	lctx2, err := m.Lock(ctx) // the same owner locks again
	if err != nil {
		t.Fatal(err)
	}
	close(g.gate) // the undo's release lands now
	time.Sleep(300 * time.Millisecond)
	if octx, err := other.TryLock(testCtx(t, 5*time.Second), 0); err == nil {
		defer other.Unlock(octx)
		if lctx2.Err() == nil {
			t.Fatal("another owner holds the lock while the owner's new hold's context is alive: the undo released the new hold")
		}
	}
	_ = m.Unlock(lctx2)
}

// A hold's lease runs out; its owner (taken with OwnerFrom) locks again; the
// first hold's deferred Unlock then runs. It must not release the new hold.
func TestStaleUnlockSparesNewHold(t *testing.T) {
	t.Parallel()
	for _, lc := range lockCases {
		t.Run(lc.name, func(t *testing.T) {
			node := redistest.Server(t)
			c := newTestClient(t, node.Client(t))
			other := lc.make(t, newTestClient(t, node.Client(t), WithKeyPrefix(c.cfg.prefix)), "stale-unlock")
			l := lc.make(t, c, "stale-unlock")
			ctx := testCtx(t, 20*time.Second)
			lctx1, err := lc.withLease(l, ctx, 300*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			<-lctx1.Done() // lost: the lease ran out
			time.Sleep(100 * time.Millisecond)
			owner, _ := OwnerFrom(lctx1)
			lctx2, err := l.Lock(WithOwner(ctx, owner))
			if err != nil {
				t.Fatal(err)
			}
			uerr := l.Unlock(lctx1)
			var o Locker = other
			if lc.name == "RWMutexRead" {
				o = other.(readLocker).rw // a writer
			}
			if octx, err := o.TryLock(testCtx(t, 5*time.Second), 0); err == nil {
				defer o.Unlock(octx)
				if lctx2.Err() == nil {
					t.Fatalf("Unlock of the ended hold's context (%v) released the owner's new hold: another owner holds the lock while the new context is alive", uerr)
				}
			}
			if err := l.Unlock(lctx2); err != nil {
				t.Fatalf("Unlock of the new hold: %v", err)
			}
		})
	}
}

// RedLock.Extend to a shorter lease whose replies are slow: the validity must
// shrink before the node calls, since each node applies the lease when its
// script runs.
func TestRedLockExtendShorterSlowReply(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	prefix := sharedPrefix(t)
	cs := make([]*Client, len(nodes))
	pxs := make([]*netproxy.Proxy, len(nodes))
	for i, n := range nodes {
		pxs[i] = netproxy.New(t, n.Addr)
		cs[i] = newTestClient(t, pxs[i].Client(t), prefix)
	}
	ctx := testCtx(t, 30*time.Second)
	const long, short = 20 * time.Second, 300 * time.Millisecond
	r := mustRedLock(t, "ext-slow", cs, WithLease(long), WithNodeTimeout(3*time.Second))
	lctx, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Extend(ctx, lctx, long); err != nil { // scripts loaded
		t.Fatal(err)
	}
	for _, px := range pxs {
		px.FreezeReplies()
	}
	done := make(chan error, 1)
	go func() { done <- r.Extend(ctx, lctx, short) }()
	time.Sleep(short + 300*time.Millisecond)
	alive := lctx.Err() == nil
	var onNodes int
	for i, n := range nodes {
		if exists(t, n, r.nodes[i].Key()) {
			onNodes++
		}
	}
	for _, px := range pxs {
		px.Thaw()
	}
	<-done
	if alive && onNodes < r.Quorum() {
		t.Fatalf("RedLock context alive while its lock is gone from %d of %d nodes (the shorter lease ran out)", len(nodes)-onNodes, len(nodes))
	}
}

// A re-entry with a shorter lease whose reply is lost, or only slow: the
// script set the lock's expiry to the short lease when it ran, so the outer
// hold's context must not keep its long one (FairMutex on either queue,
// Mutex).
func TestReentryShorterLeaseReplyLost(t *testing.T) {
	t.Parallel()
	type leaser interface {
		Locker
		LockWithLease(ctx context.Context, lease time.Duration) (context.Context, error)
		TryLockWithLease(ctx context.Context, wait, lease time.Duration) (context.Context, error)
	}
	type handles struct {
		l     leaser
		other Locker
	}
	for _, tc := range []struct {
		name string
		open func(t *testing.T, p proxied) handles
	}{
		{"Mutex", func(t *testing.T, p proxied) handles {
			o := newTestClient(t, p.node.Client(t), WithKeyPrefix(p.c.cfg.prefix))
			return handles{mustMutex(t, p.c, "reentry-short"), mustMutex(t, o, "reentry-short")}
		}},
		{"FairMutex", func(t *testing.T, p proxied) handles {
			o := newTestClient(t, p.node.Client(t), WithKeyPrefix(p.c.cfg.prefix))
			return handles{mustFair(t, p.c, "reentry-short"), mustFair(t, o, "reentry-short")}
		}},
		{"FairMutex (Redisson queue)", func(t *testing.T, p proxied) handles {
			o := newTestClient(t, p.node.Client(t), WithKeyPrefix(p.c.cfg.prefix))
			return handles{mustFair(t, p.c, "reentry-short", WithRedissonFairQueue(0)), mustFair(t, o, "reentry-short", WithRedissonFairQueue(0))}
		}},
	} {
		for _, slow := range []bool{false, true} {
			name := tc.name + map[bool]string{false: ", reply lost", true: ", reply slow"}[slow]
			t.Run(name, func(t *testing.T) {
				p := newProxied(t)
				h := tc.open(t, p)
				ctx := testCtx(t, 30*time.Second)
				l1, err := h.l.LockWithLease(ctx, 10*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				const short = 300 * time.Millisecond
				p.px.FreezeReplies()
				done := make(chan struct{})
				go func() {
					defer close(done)
					d := 200 * time.Millisecond // the call gives up: its outcome is unknown
					if slow {
						d = 3 * time.Second
					}
					actx, cancel := context.WithTimeout(l1, d)
					defer cancel()
					if l2, err := h.l.TryLockWithLease(actx, 0, short); err == nil {
						_ = h.l.Unlock(l2)
					}
				}()
				time.Sleep(short + 300*time.Millisecond)
				octx, err := h.other.TryLock(testCtx(t, 5*time.Second), 0)
				alive := l1.Err() == nil
				p.px.Thaw()
				<-done
				if err == nil {
					defer h.other.Unlock(octx)
					if alive {
						t.Fatal("another owner holds the lock while the re-entering owner's outer lock context (10 s lease) is alive")
					}
				}
			})
		}
	}
}

// A renewal sent before a re-entry with a shorter lease, whose reply is
// handled after the re-entry's: the server ran the renewal first, so the
// re-entry's lease is the one in force, and the renewal must not move the
// loss deadline past it. The re-entry of a hold the watchdog renews sets the
// watchdog's lease (the outer hold lasts until its Unlock), so the lock
// stays the first owner's, and should another owner be granted it all the
// same, the first owner's context must have ended.
func TestRenewalHandledAfterShorterReentry(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	// Holds up the handling of the first renewal, after its reply arrived
	// and before the hold is re-armed from it.
	entered, proceed := make(chan struct{}), make(chan struct{})
	var once atomic.Bool
	c := newTestClient(t, node.Client(t), WithWatchdog(10*time.Second, 2*time.Second))
	c.wd.renewedHook = func() {
		if once.CompareAndSwap(false, true) {
			close(entered)
			<-proceed
		}
	}
	o := newTestClient(t, node.Client(t), WithKeyPrefix(c.cfg.prefix))
	m := mustMutex(t, c, "renew-reenter")
	ctx := testCtx(t, 20*time.Second)
	outer, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal("no watchdog renewal within 5 s")
	}
	_, err = m.LockWithLease(outer, 500*time.Millisecond)
	close(proceed)
	if err != nil {
		t.Fatal(err)
	}
	other, err := mustMutex(t, o, "renew-reenter").TryLock(testCtx(t, 5*time.Second), 2*time.Second)
	if err == nil {
		defer mustMutex(t, o, "renew-reenter").Unlock(other)
		t.Errorf("the lock expired under the watchdog hold with the re-entry's 500 ms lease")
	} else if err := context.Cause(outer); err != nil {
		t.Errorf("the watchdog hold ended under its re-entry with a 500 ms lease: %v", err)
	}
	if err == nil && outer.Err() == nil {
		t.Fatalf("another owner holds the lock while the first owner's context is alive (its loss deadline is %s away)",
			time.Until(monoTime(outer.Value(lockCtxKey{}).(*lockCtx).hold.lossAt.Load())).Round(time.Millisecond))
	}
}
