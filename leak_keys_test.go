package scriptlock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// keysWithoutExpiry lists the keys on n that have no expiry, besides those
// keep says the user made on purpose.
func keysWithoutExpiry(t *testing.T, n *redistest.Node, keep func(string) bool) []string {
	t.Helper()
	var left []string
	cursor := "0"
	for {
		res, err := n.Do(t, "SCAN", cursor, "COUNT", "1000").ToArray()
		if err != nil {
			t.Fatalf("SCAN: %v", err)
		}
		cursor, _ = res[0].ToString()
		keys, _ := res[1].AsStrSlice()
		for _, k := range keys {
			if keep(k) {
				continue
			}
			ttl, err := n.Do(t, "PTTL", k).AsInt64()
			if testing.Verbose() {
				t.Logf("key %s PTTL %d", k, ttl)
			}
			if err == nil && ttl == -1 {
				typ, _ := n.Do(t, "TYPE", k).ToString()
				left = append(left, k+" ("+typ+")")
			}
		}
		if cursor == "0" {
			return left
		}
	}
}

// leakPaths runs l (and rival, the same lock on another Client) through the
// paths that write a lock's companion keys: contended waits that time out or
// are cancelled, a waiter cut off by Close, a holder closed while holding, a
// ForceUnlock under waiters, an acquisition whose reply is lost, a holder
// whose connection stops for good.
func leakPaths(t *testing.T, px *netproxy.Proxy, l, rival, cut Locker, closeCut func()) {
	t.Helper()
	ctx := testCtx(t, 30*time.Second)
	// Plain use.
	lctx, err := l.Lock(ctx)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	if err := l.Unlock(lctx); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	// Held by rival: waits that time out and are cancelled.
	rctx, err := rival.Lock(WithOwner(ctx, "rival"))
	if err != nil {
		t.Fatalf("rival Lock: %v", err)
	}
	if _, err := l.TryLock(ctx, 150*time.Millisecond); err == nil {
		t.Fatal("TryLock got a held lock")
	}
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wctx, cancel := context.WithTimeout(WithOwner(ctx, "waiter-"+string(rune('a'+i))), 100*time.Millisecond+time.Duration(i)*70*time.Millisecond)
			defer cancel()
			if _, err := l.Lock(wctx); err == nil {
				t.Error("Lock got a held lock")
			}
		}()
	}
	wg.Wait()
	// A waiter on the cut Client, the proxied connection dropped and
	// frozen under its wait: its process stops without Close.
	cutDone := make(chan struct{})
	go func() {
		defer close(cutDone)
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		if lc, err := cut.Lock(WithOwner(cctx, "cut")); err == nil {
			_ = cut.Unlock(lc)
		}
	}()
	time.Sleep(200 * time.Millisecond)
	// ForceUnlock under waiters, then the waiter that takes it unlocks.
	if f, ok := l.(interface {
		ForceUnlock(context.Context) (bool, error)
	}); ok {
		wctx, cancel := context.WithTimeout(WithOwner(ctx, "after-force"), 3*time.Second)
		got := make(chan context.Context, 1)
		go func() {
			lc, err := l.Lock(wctx)
			if err != nil {
				lc = nil
			}
			got <- lc
		}()
		time.Sleep(100 * time.Millisecond)
		if _, err := f.ForceUnlock(ctx); err != nil {
			t.Errorf("ForceUnlock: %v", err)
		}
		if lc := <-got; lc != nil {
			_ = l.Unlock(lc)
		}
		cancel()
	} else if err := rival.Unlock(rctx); err != nil {
		t.Errorf("rival Unlock: %v", err)
	}
	// The cut process is gone for good: its Close reaches no server, and
	// what it wrote must expire on its own.
	px.Refuse()
	closeCut()
	<-cutDone
}

func TestNoKeyLeftWithoutExpiry(t *testing.T) {
	node := redistest.Server(t)
	for _, lc := range append(lockCases, lockCase{name: "FairMutexRedisson", make: func(t testing.TB, c *Client, n string, o ...LockOption) Locker {
		return mustFair(t, c, n, append(o, WithRedissonFairQueue(time.Second))...)
	}}) {
		t.Run(lc.name, func(t *testing.T) {
			prefix := sharedPrefix(t)
			opts := []Option{prefix, WithWatchdog(800*time.Millisecond, 250*time.Millisecond), WithReleaseTimeout(300 * time.Millisecond)}
			c := newTestClient(t, node.Client(t), opts...)
			c2 := newTestClient(t, node.Client(t), opts...)
			px := netproxy.New(t, node.Addr)
			cut, err := New(px.Client(t), opts...)
			if err != nil {
				t.Fatal(err)
			}
			closed := make(chan struct{})
			closeCut := func() {
				go func() { defer close(closed); cut.Close() }()
			}
			t.Cleanup(func() { px.Thaw(); <-closed })
			rival := lc.make(t, c2, "leak")
			if lc.name == "RWMutexRead" {
				rival = mustRW(t, c2, "leak") // readers share; a writer makes them wait
			}
			leakPaths(t, px, lc.make(t, c, "leak"), rival, lc.make(t, cut, "leak"), closeCut)
			<-closed
			if err := c.Close(); err != nil && !errors.Is(err, ErrClosed) {
				t.Logf("Close: %v", err)
			}
			c2.Close()
			if left := keysWithoutExpiry(t, node, func(string) bool { return false }); len(left) > 0 {
				t.Errorf("keys without an expiry left: %v", left)
			}
		})
	}
}

// The semaphores, the latch, MultiLock and RedLock through waits that time
// out or are cancelled, a Client whose connection stops under its wait and
// its holds, and lost replies: once the objects the test made on purpose
// are deleted, every key left has an expiry.
func TestNoKeyLeftWithoutExpiryOthers(t *testing.T) {
	nodes := redistest.Servers(t, 3)
	node := nodes[0]
	prefix := sharedPrefix(t)
	opts := []Option{prefix, WithWatchdog(800*time.Millisecond, 250*time.Millisecond), WithReleaseTimeout(300 * time.Millisecond)}
	c := newTestClient(t, node.Client(t), opts...)
	px := netproxy.New(t, node.Addr)
	cut, err := New(px.Client(t), opts...)
	if err != nil {
		t.Fatal(err)
	}
	p := proxied{node, px, cut}
	ctx := testCtx(t, 30*time.Second)
	short := func(d time.Duration) context.Context {
		cctx, cancel := context.WithTimeout(ctx, d)
		t.Cleanup(cancel)
		return cctx
	}

	// Semaphore: a wait for a permit of none, the cut Client's wait and a
	// permit it holds as its connection stops.
	sem := mustSem(t, c, "sem")
	if _, err := sem.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	semCut := mustSem(t, cut, "sem")
	if err := semCut.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := sem.TryAcquire(ctx, 1, 100*time.Millisecond); err == nil {
		t.Fatal("TryAcquire got a permit of none")
	}
	// PermitSemaphore likewise, and a lost reply of an acquisition.
	ps := mustPermits(t, c, "permits")
	if _, err := ps.TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	psCut := mustPermits(t, cut, "permits")
	if _, err := psCut.Acquire(ctx, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	_ = p.lostReply(t, func() bool {
		n, _ := node.Do(t, "ZCARD", ps.timeouts).AsInt64()
		return n >= 2
	}, func() error {
		_, err := psCut.Acquire(ctx, 2*time.Second)
		return err
	})
	if _, err := ps.TryAcquire(short(time.Second), time.Second, 100*time.Millisecond); err == nil {
		t.Fatal("TryAcquire got a permit of none")
	}
	// CountDownLatch: awaits that time out, one cut.
	latch := mustLatch(t, c, "latch")
	if _, err := latch.TrySetCount(ctx, 2); err != nil {
		t.Fatal(err)
	}
	// Unanswered too when the machine is too loaded for the subscription
	// to be confirmed within 100 ms past the wait's end.
	if ok, err := latch.AwaitTimeout(ctx, 100*time.Millisecond); ok || err != nil && !unansweredErr(err) {
		t.Fatalf("AwaitTimeout = %v, %v", ok, err)
	}
	// MultiLock over a Mutex and a FairMutex, one member held by another
	// owner: waits time out, then one on the cut Client.
	a, b := mustMutex(t, c, "ma"), mustFair(t, c, "mb")
	held, err := b.Lock(WithOwner(ctx, "other"))
	if err != nil {
		t.Fatal(err)
	}
	ml := mustMulti(t, []Locker{a, b})
	if _, err := ml.TryLock(ctx, 150*time.Millisecond); err == nil {
		t.Fatal("MultiLock got a held member")
	}
	mlCut := mustMulti(t, []Locker{mustMutex(t, cut, "ma"), mustFair(t, cut, "mb")})
	// RedLock over the three servers, the cut Client one of its nodes.
	reds := []*Client{cut, newTestClient(t, nodes[1].Client(t), opts...), newTestClient(t, nodes[2].Client(t), opts...)}
	// Every node's grant, the cut node's above all, is what is left behind;
	// the default node timeout (a hundredth of the lease, 10 ms here) is
	// shorter than a loaded machine's round trip.
	rl := mustRedLock(t, "red", reds, WithNodeTimeout(200*time.Millisecond))
	rlCtx := lockEveryNode(t, ctx, rl)

	var wg sync.WaitGroup
	for _, wait := range []func(context.Context) error{
		func(ctx context.Context) error { return semCut.Acquire(ctx, 1) },
		func(ctx context.Context) error { _, err := psCut.Acquire(ctx, time.Second); return err },
		func(ctx context.Context) error { return mustLatch(t, cut, "latch").Await(ctx) },
		func(ctx context.Context) error { _, err := mlCut.Lock(ctx); return err },
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = wait(short(3 * time.Second))
		}()
	}
	time.Sleep(300 * time.Millisecond)
	px.Freeze() // the cut process stops: no Close, no Unlock
	wg.Wait()
	_ = b.Unlock(held)
	_ = rl.Unlock(rlCtx)
	// The cut process is gone for good: its Close reaches no server, and
	// what it wrote must expire on its own.
	px.Refuse()
	cut.Close()

	// The objects made on purpose go.
	for _, del := range []func(context.Context) (bool, error){sem.Delete, ps.Delete, latch.Delete} {
		if _, err := del(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for i, n := range nodes {
		if left := keysWithoutExpiry(t, n, func(string) bool { return false }); len(left) > 0 {
			t.Errorf("node %d: keys without an expiry left: %v", i, left)
		}
	}
}
