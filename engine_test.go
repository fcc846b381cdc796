package scriptlock

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Fault tests of the hold lifecycle, run for every primitive that goes
// through it.

type lockCase struct {
	name  string
	make  func(t testing.TB, c *Client, name string, opts ...LockOption) Locker
	fence bool // grants carry a fencing token
	// withLease is LockWithLease (nil: the side has none on its Locker).
	withLease func(l Locker, ctx context.Context, lease time.Duration) (context.Context, error)
}

var lockCases = []lockCase{
	{"Mutex", func(t testing.TB, c *Client, n string, o ...LockOption) Locker { return mustMutex(t, c, n, o...) }, true,
		func(l Locker, ctx context.Context, d time.Duration) (context.Context, error) {
			return l.(*Mutex).LockWithLease(ctx, d)
		}},
	{"FairMutex", func(t testing.TB, c *Client, n string, o ...LockOption) Locker { return mustFair(t, c, n, o...) }, true,
		func(l Locker, ctx context.Context, d time.Duration) (context.Context, error) {
			return l.(*FairMutex).LockWithLease(ctx, d)
		}},
	{"LeanMutex", func(t testing.TB, c *Client, n string, o ...LockOption) Locker { return mustLean(t, c, n, o...) }, false,
		func(l Locker, ctx context.Context, d time.Duration) (context.Context, error) {
			return l.(*LeanMutex).LockWithLease(ctx, d)
		}},
	{"LeanMutexFenced", func(t testing.TB, c *Client, n string, o ...LockOption) Locker {
		return mustLean(t, c, n, append(o, WithFencing())...)
	}, true,
		func(l Locker, ctx context.Context, d time.Duration) (context.Context, error) {
			return l.(*LeanMutex).LockWithLease(ctx, d)
		}},
	{"RWMutex", func(t testing.TB, c *Client, n string, o ...LockOption) Locker { return mustRW(t, c, n, o...) }, true,
		func(l Locker, ctx context.Context, d time.Duration) (context.Context, error) {
			return l.(*RWMutex).LockWithLease(ctx, d)
		}},
	{"RWMutexRead", func(t testing.TB, c *Client, n string, o ...LockOption) Locker {
		return mustRW(t, c, n, o...).RLocker()
	}, false,
		func(l Locker, ctx context.Context, d time.Duration) (context.Context, error) {
			return l.(readLocker).rw.RLockWithLease(ctx, d)
		}},
}

// reentrant: the same owner locking again re-enters (LeanMutex refuses).
func (lc lockCase) reentrant() bool { return !strings.HasPrefix(lc.name, "LeanMutex") }

// proxied is a Client whose every connection goes through a freezable proxy.
type proxied struct {
	node *redistest.Node
	px   *netproxy.Proxy
	c    *Client
}

func newProxied(t *testing.T, opts ...Option) proxied {
	t.Helper()
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	c := newTestClient(t, px.Client(t), opts...)
	return proxied{node, px, c}
}

// holdDirect holds the lock lc names name (for RWMutexRead, its write side)
// through a Client of p's server straight, not through the proxy, with p's
// key prefix, until the test ends.
func holdDirect(t *testing.T, p proxied, lc lockCase, name string) {
	t.Helper()
	direct := newTestClient(t, p.node.Client(t), WithKeyPrefix(p.c.cfg.prefix))
	holder := lc.make(t, direct, name)
	if lc.name == "RWMutexRead" {
		holder = mustRW(t, direct, name)
	}
	hctx, err := holder.Lock(testCtx(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Unlock(hctx) })
}

// lostReply runs call with its first reply lost: the proxy holds replies
// back until landed sees the call's effect on the server, then drops every
// connection. It returns call's error.
func (p proxied) lostReply(t *testing.T, landed func() bool, call func() error) error {
	t.Helper()
	p.px.FreezeReplies()
	return p.lostReplyFrozen(t, landed, call)
}

// lostDeletionReply is lostReply for a call that reserves its record
// (ForceUnlock, a semaphore's or latch's Delete, DrainPermits): the replies
// are held back once its record is reserved, so the call's reply is the one
// lost.
func (p proxied) lostDeletionReply(t *testing.T, landed func() bool, call func() error) error {
	t.Helper()
	p.c.testReserved = p.px.FreezeReplies
	defer func() { p.c.testReserved = nil }()
	return p.lostReplyFrozen(t, landed, call)
}

func (p proxied) lostReplyFrozen(t *testing.T, landed func() bool, call func() error) error {
	t.Helper()
	res := make(chan error, 1)
	go func() { res <- call() }()
	if !eventually(3*time.Second, landed) {
		p.px.Thaw()
		t.Fatal("the call did not reach the server")
	}
	p.px.DropAll() // the reply is lost with its connection
	p.px.Thaw()
	select {
	case err := <-res:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not return")
		return nil
	}
}

func (p proxied) key(t *testing.T, name string) string {
	t.Helper()
	k, err := lockKey(p.c.cfg.prefix, name)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// reconnect waits until the proxied client has replaced the connections
// DropAll closed (the first command on a dropped connection fails).
func (p proxied) reconnect(t *testing.T) {
	t.Helper()
	ok := eventually(5*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return p.c.rc.Do(ctx, p.c.rc.B().Ping().Build()).Error() == nil
	})
	if !ok {
		t.Fatal("client did not reconnect")
	}
}

// exists asks the server directly, not through the proxy.
func exists(t *testing.T, node *redistest.Node, key string) bool {
	t.Helper()
	n, err := node.Do(t, "EXISTS", key).AsInt64()
	if err != nil {
		t.Fatalf("EXISTS %s: %v", key, err)
	}
	return n == 1
}

// eventually polls cond every 20 ms until it holds or d passes.
func eventually(d time.Duration, cond func() bool) bool {
	end := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// warm takes and releases the lock once so connections and scripts are ready
// before a fault is injected.
func warm(t *testing.T, l Locker) {
	t.Helper()
	warmWith(t, l, testCtx(t, 10*time.Second))
}

// warmShared is warm for the scripts of an owner from the context
// (WithOwner), which a LeanMutex takes with the fenced script.
func warmShared(t *testing.T, l Locker) {
	t.Helper()
	warmWith(t, l, WithOwner(testCtx(t, 10*time.Second), "warm-up"))
}

func warmWith(t *testing.T, l Locker, ctx context.Context) {
	t.Helper()
	lctx, err := l.Lock(ctx)
	if err != nil {
		t.Fatalf("warm-up Lock: %v", err)
	}
	// A release past its timeout (a loaded machine, a first script load) is
	// made again with the same context, as the hold lifecycle says: once
	// that finds the lock released, the first one went through.
	for i := range 5 {
		err = l.Unlock(lctx)
		if err == nil || (i > 0 && errors.Is(err, ErrNotHeld)) {
			return
		}
	}
	t.Fatalf("warm-up Unlock, made 5 times: %v", err)
}

// A TryLock whose context has a 100 ms deadline returns well within a second
// against a server that stopped answering, and the acquisition it may have
// made there is undone once the server answers again.
func TestAcquireBoundedByDeadline(t *testing.T) {
	t.Parallel()
	for _, lc := range lockCases {
		t.Run(lc.name, func(t *testing.T) {
			p := newProxied(t)
			l := lc.make(t, p.c, "bounded")
			warm(t, l)
			p.px.Freeze()
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := l.TryLock(ctx, 5*time.Second)
			elapsed := time.Since(start)
			p.px.Thaw()
			if err == nil {
				t.Fatal("TryLock succeeded against a frozen server")
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("error %v does not report the deadline", err)
			}
			if elapsed > time.Second {
				t.Fatalf("TryLock with a 100ms deadline returned after %s", elapsed)
			}
			if !eventually(10*time.Second, func() bool { return !exists(t, p.node, p.key(t, "bounded")) }) {
				t.Fatal("the acquisition that reached the server after the deadline was not undone")
			}

			// Waiting in line behind another owner when the server stops
			// answering: giving up the place does not hold the caller either.
			holdDirect(t, p, lc, "bounded")
			p.reconnect(t)
			ctx, cancel = context.WithTimeout(context.Background(), 600*time.Millisecond)
			defer cancel()
			time.AfterFunc(300*time.Millisecond, p.px.Freeze)
			start = time.Now()
			_, err = l.TryLock(ctx, 5*time.Second)
			elapsed = time.Since(start)
			p.px.Thaw()
			if err == nil {
				t.Fatal("TryLock succeeded against a held lock")
			}
			if elapsed > 1500*time.Millisecond {
				t.Fatalf("TryLock with a 600ms deadline, waiting in line when the server froze, returned after %s", elapsed)
			}
		})
	}
}

// The server runs the acquire script but its reply is lost: the acquisition
// is undone by owner, and the owner's next Lock is a fresh grant with a
// fencing token, not a re-entry of a hold it never knew of.
func TestLostAcquireReplyUndone(t *testing.T) {
	t.Parallel()
	for _, lc := range lockCases {
		t.Run(lc.name, func(t *testing.T) {
			p := newProxied(t)
			l := lc.make(t, p.c, "lost-reply")
			key := p.key(t, "lost-reply")
			warmShared(t, l)
			ctx := WithOwner(testCtx(t, 20*time.Second), "owner-1")
			p.px.FreezeReplies()
			res := make(chan error, 1)
			go func() {
				actx, cancel := context.WithTimeout(ctx, 5*time.Second)
				defer cancel()
				_, err := l.TryLock(actx, 0)
				res <- err
			}()
			if !eventually(3*time.Second, func() bool { return exists(t, p.node, key) }) {
				t.Fatal("the acquire script did not reach the server")
			}
			p.px.DropAll()
			p.px.Thaw()
			if err := <-res; err == nil {
				t.Fatal("TryLock succeeded although its reply was lost")
			}
			if !eventually(5*time.Second, func() bool { return !exists(t, p.node, key) }) {
				t.Fatal("the acquisition whose reply was lost is still held")
			}
			p.reconnect(t)
			lctx, err := l.TryLock(ctx, 5*time.Second)
			if err != nil {
				t.Fatalf("Lock after the undo: %v", err)
			}
			if _, ok := Fence(lctx); lc.fence && !ok {
				t.Fatal("the owner's next Lock re-entered an unknown hold: no fencing token")
			}
			if err := l.Unlock(lctx); err != nil {
				t.Fatal(err)
			}
			if exists(t, p.node, key) {
				t.Fatal("lock still held after Unlock")
			}
		})
	}
}

// An Unlock that fails for good drops the hold: its context ends with
// ErrLockLost, nothing renews it, and the lock ends with its lease.
//
// The watchdog's lease (3 s) outlasts the frozen release by far: with a
// 900 ms lease, a test stalled some 600 ms past the release timeout (a
// loaded machine) found the lease run out on the server, and read it as the
// frozen release having reached it. Once the release is known not to have
// reached the server, the lock's TTL there is cut to 900 ms: a watchdog
// still renewing it (every 300 ms, to 3 s) would keep it past the wait. A
// renewal in flight as the Unlock failed may land once more (rueidis sends
// it again on the new connection): its lease ends within the wait.
func TestFailedUnlockDropsHold(t *testing.T) {
	t.Parallel()
	for _, lc := range lockCases {
		t.Run(lc.name, func(t *testing.T) {
			p := newProxied(t, WithWatchdog(3*time.Second, 300*time.Millisecond), WithReleaseTimeout(300*time.Millisecond))
			l := lc.make(t, p.c, "failed-unlock")
			key := p.key(t, "failed-unlock")
			// Warmed through a handle with the default release timeout: a
			// loaded machine's warm-up Unlock missed 300 ms.
			warm(t, lc.make(t, p.c, "failed-unlock", WithReleaseTimeout(DefaultReleaseTimeout)))
			lctx, err := l.Lock(testCtx(t, 10*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			p.px.Freeze()
			err = l.Unlock(lctx)
			// Drop the frozen release so it never reaches the server.
			p.px.DropAll()
			p.px.Thaw()
			if err == nil {
				t.Fatal("Unlock succeeded against a frozen server")
			}
			select {
			case <-lctx.Done():
			default:
				t.Fatal("the lock context is still live after a failed Unlock")
			}
			if !errors.Is(context.Cause(lctx), ErrLockLost) {
				t.Fatalf("cause = %v, want ErrLockLost", context.Cause(lctx))
			}
			if !exists(t, p.node, key) {
				t.Fatal("the frozen release reached the server; the test proves nothing")
			}
			if err := p.node.Do(t, "PEXPIRE", key, "900").Error(); err != nil {
				t.Fatal(err)
			}
			if !eventually(5*time.Second, func() bool { return !exists(t, p.node, key) }) {
				t.Fatal("the lock is still renewed 5 s after its Unlock failed and its TTL was cut to 900 ms")
			}
		})
	}
}

// A grant that arrives after Close began is given back: Lock fails with
// ErrClosed and nothing stays held. An acquisition in flight when Close
// begins whose reply is lost instead (its outcome unknown) is undone before
// Close returns, as Close waits for it.
func TestCloseRacingAcquire(t *testing.T) {
	t.Parallel()
	for _, lc := range lockCases {
		for _, lost := range []bool{false, true} {
			name := lc.name
			if lost {
				name += "/ReplyLost"
			}
			t.Run(name, func(t *testing.T) {
				p := newProxied(t)
				l := lc.make(t, p.c, "close-race")
				key := p.key(t, "close-race")
				warm(t, l)
				p.px.FreezeReplies()
				res := make(chan error, 1)
				go func() {
					var err error
					if lost {
						_, err = l.TryLock(testCtx(t, 10*time.Second), 0)
					} else {
						_, err = l.Lock(testCtx(t, 10*time.Second))
					}
					res <- err
				}()
				if !eventually(3*time.Second, func() bool { return exists(t, p.node, key) }) {
					p.px.Thaw()
					t.Fatalf("the acquire script did not reach the server: keys %v", p.node.Do(t, "KEYS", "*"))
				}
				closed := make(chan struct{})
				go func() { p.c.Close(); close(closed) }()
				if !eventually(3*time.Second, p.c.closed) {
					t.Fatal("Close did not begin")
				}
				if lost {
					p.px.DropAll() // the reply is lost with its connection
				}
				p.px.Thaw()
				select {
				case err := <-res:
					if err == nil || !lost && !errors.Is(err, ErrClosed) {
						t.Fatalf("Lock racing Close = %v, want ErrClosed (or, its reply lost, an error)", err)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("Lock did not return")
				}
				select {
				case <-closed:
				case <-time.After(10 * time.Second):
					t.Fatal("Close did not return")
				}
				if exists(t, p.node, key) {
					t.Fatal("Close returned with the lock held by the acquisition that raced it: it stays held until its lease ends")
				}
			})
		}
	}
}

// With the network frozen, the lock context ends before the server lets the
// lease run out. The hold's loss deadline is checked against the server's
// expiry (PTTL, sampled once the freeze is in place), and the context must
// end at that deadline; how late a timer fires on a loaded machine is the
// scheduler's, so that gets slack.
func TestLossBeforeExpiry(t *testing.T) {
	t.Parallel()
	for _, lc := range lockCases {
		t.Run(lc.name, func(t *testing.T) {
			p := newProxied(t, WithWatchdog(time.Second, 300*time.Millisecond))
			direct := p.node.Client(t)
			l := lc.make(t, p.c, "loss")
			key := p.key(t, "loss")
			warm(t, l)
			check := func(lctx context.Context, what string) {
				t.Helper()
				ended := make(chan time.Time, 1)
				context.AfterFunc(lctx, func() { ended <- time.Now() })
				lossAt := monoTime(lctx.Value(lockCtxKey{}).(*lockCtx).hold.lossAt.Load())
				pttl, err := direct.Do(context.Background(), direct.B().Pttl().Key(key).Build()).AsInt64()
				replied := time.Now()
				switch {
				case err != nil:
					t.Fatalf("%s: PTTL: %v", what, err)
				case pttl > 0:
					// The key expires at most pttl after the reply came
					// back: a loss deadline past that is a contract breach.
					if expiry := replied.Add(time.Duration(pttl) * time.Millisecond); !lossAt.Before(expiry) {
						t.Fatalf("%s: loss deadline %s after the server's expiry", what, lossAt.Sub(expiry))
					}
				case !time.Now().After(lossAt):
					t.Fatalf("%s: the key is gone (PTTL %d) before the loss deadline", what, pttl)
				}
				// When the timer fires is the scheduler's business on a
				// loaded machine: generous slack.
				select {
				case at := <-ended:
					if late := at.Sub(lossAt); late > 2*time.Second {
						t.Fatalf("%s: context ended %s after its loss deadline", what, late)
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("%s: lock context never ended", what)
				}
				if !errors.Is(context.Cause(lctx), ErrLockLost) {
					t.Fatalf("%s: cause = %v, want ErrLockLost", what, context.Cause(lctx))
				}
			}
			lctx, err := l.Lock(testCtx(t, 10*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			p.px.Freeze()
			time.Sleep(50 * time.Millisecond) // a renewal already past the proxy lands
			check(lctx, "watchdog, network frozen")
			p.px.DropAll()
			p.px.Thaw()
			p.reconnect(t)
			if !eventually(5*time.Second, func() bool { return !exists(t, p.node, key) }) {
				t.Fatal("lock did not expire")
			}
			// An explicit lease, nothing frozen.
			// The first calls after DropAll may still meet a dropped connection.
			for range 5 {
				if lctx, err = lc.withLease(l, testCtx(t, 10*time.Second), 700*time.Millisecond); err == nil {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if err != nil {
				t.Fatal(err)
			}
			check(lctx, "explicit lease")
		})
	}
}

// A re-entrant Unlock re-arms the lease the hold was acquired with, not the
// watchdog's.
func TestReentrantUnlockKeepsLease(t *testing.T) {
	t.Parallel()
	for _, lc := range lockCases {
		if !lc.reentrant() {
			continue
		}
		t.Run(lc.name, func(t *testing.T) {
			node := redistest.Server(t)
			c := newTestClient(t, node.Client(t))
			l := lc.make(t, c, "reenter")
			key, _ := lockKey(c.cfg.prefix, "reenter")
			ctx := WithOwner(testCtx(t, 10*time.Second), "owner-1")
			outer, err := lc.withLease(l, ctx, 2*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			inner, err := lc.withLease(l, outer, 2*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Unlock(inner); err != nil {
				t.Fatal(err)
			}
			pttl, err := node.Do(t, "PTTL", key).AsInt64()
			if err != nil {
				t.Fatal(err)
			}
			if pttl <= 0 || pttl > 2000 {
				t.Fatalf("PTTL after a re-entrant Unlock = %d ms, want at most the 2000 ms lease", pttl)
			}
			if err := l.Unlock(outer); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A renewal that finds the lock gone because its owner is releasing it does
// not report the lock lost: after a successful Unlock the cause is always
// context.Canceled.
func TestRenewalRacingUnlock(t *testing.T) {
	t.Parallel()
	stress(t)
	for _, lc := range lockCases {
		t.Run(lc.name, func(t *testing.T) {
			node := redistest.Server(t)
			// Renewals back to back; a lease long enough that the loss
			// deadline never falls inside one Lock/Unlock on a loaded machine.
			c := newTestClient(t, node.Client(t), WithWatchdog(10*time.Second, time.Millisecond))
			l := lc.make(t, c, "renew-race")
			ctx := testCtx(t, 60*time.Second)
			for i := range 200 {
				lctx, err := l.Lock(ctx)
				if err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Duration(i%3) * time.Millisecond)
				if err := l.Unlock(lctx); err != nil {
					t.Fatalf("Unlock %d: %v", i, err)
				}
				if cause := context.Cause(lctx); cause != context.Canceled {
					t.Fatalf("round %d: cause after a successful Unlock = %v", i, cause)
				}
			}
		})
	}
}

// A waiter that takes a hand-off signal and then gives up passes the signal
// to the next waiter instead of leaving it asleep until its fallback.
func TestHandOffPassedOn(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := node.Client(t)
	c := newTestClient(t, rc)
	ctx := testCtx(t, 20*time.Second)
	channel := c.cfg.prefix + "handoff"
	firstIn := make(chan struct{})
	var calls atomic.Int32
	first := make(chan error, 1)
	go func() {
		_, err := c.waitNotified(ctx, channel, false, -1, func(context.Context) (bool, time.Duration, error) {
			if calls.Add(1) <= 2 { // before and right after subscribing
				return false, time.Minute, nil
			}
			// Woken, then the caller's context ends mid-attempt.
			return false, 0, context.DeadlineExceeded
		})
		first <- err
	}()
	// The first waiter subscribes (and tries again) before the second joins.
	if !eventually(5*time.Second, func() bool { return calls.Load() >= 2 }) {
		t.Fatal("first waiter never tried")
	}
	time.Sleep(200 * time.Millisecond)
	second := make(chan time.Time, 1)
	secondTries := 0
	go func() {
		close(firstIn)
		_, _ = c.waitNotified(ctx, channel, false, -1, func(context.Context) (bool, time.Duration, error) {
			secondTries++
			if secondTries <= 2 { // before and right after subscribing
				return false, time.Minute, nil
			}
			second <- time.Now()
			return true, 0, nil
		})
	}()
	<-firstIn
	time.Sleep(300 * time.Millisecond)
	// One release message: it goes to the longest-waiting waiter, the first.
	if err := rc.Do(ctx, rc.B().Publish().Channel(channel).Message("0").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	if err := <-first; err == nil {
		t.Fatal("first waiter should have failed")
	}
	select {
	case <-second:
	case <-time.After(5 * time.Second):
		t.Fatal("the hand-off taken by a waiter that gave up was lost: the next waiter slept on")
	}
}

// Without an owner in ctx every Lock call is a new owner: goroutines sharing
// one handle exclude each other, the returned context re-enters and unlocks,
// and a context naming no owner unlocks nothing.
func TestSharedHandleExcludes(t *testing.T) {
	t.Parallel()
	for _, lc := range lockCases {
		t.Run(lc.name, func(t *testing.T) {
			node := redistest.Server(t)
			c := newTestClient(t, node.Client(t))
			ctx := testCtx(t, 10*time.Second)
			l := lc.make(t, c, "shared")
			exclusive := lc.name != "RWMutexRead"
			first, err := l.TryLock(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			second, err := l.TryLock(ctx, 0)
			if exclusive && !errors.Is(err, ErrNotAcquired) {
				t.Fatalf("a second Lock on the shared handle: %v, want ErrNotAcquired", err)
			}
			if !exclusive {
				if err != nil {
					t.Fatalf("a second reader: %v", err)
				}
				if ownerIn(second) == ownerIn(first) {
					t.Fatal("two read locks without an owner share one")
				}
				if err := l.Unlock(second); err != nil {
					t.Fatal(err)
				}
			}
			again, err := l.TryLock(first, 0)
			if !lc.reentrant() {
				if !errors.Is(err, ErrNotReentrant) {
					t.Fatalf("locking again with the returned context: %v, want ErrNotReentrant", err)
				}
			} else if err != nil {
				t.Fatalf("re-entering with the returned context: %v", err)
			}
			if err := l.Unlock(ctx); !errors.Is(err, ErrNotHeld) {
				t.Fatalf("Unlock with a context naming no owner: %v, want ErrNotHeld", err)
			}
			if lc.reentrant() {
				if err := l.Unlock(again); err != nil {
					t.Fatal(err)
				}
			}
			if err := l.Unlock(first); err != nil {
				t.Fatal(err)
			}
			key, _ := lockKey(c.cfg.prefix, "shared")
			if exists(t, node, key) {
				t.Fatal("lock still held after both Unlocks")
			}
		})
	}
}

// fenceCases are the lock kinds whose grants draw fencing tokens.
func fenceCases() []lockCase {
	redissonFair := lockCase{"FairMutexRedisson", func(t testing.TB, c *Client, n string, o ...LockOption) Locker {
		return mustFair(t, c, n, append(o, WithRedissonFairQueue(0))...)
	}, true, nil}
	return append(lockCases[:len(lockCases):len(lockCases)], redissonFair)
}

// Fencing counters expire the idle time after they start, and a counter that
// expired starts above every token it handed out.
func TestFenceCounterExpires(t *testing.T) {
	t.Parallel()
	for _, lc := range fenceCases() {
		if !lc.fence {
			continue
		}
		t.Run(lc.name, func(t *testing.T) {
			node := redistest.Server(t)
			c := newTestClient(t, node.Client(t), WithFenceIdle(time.Second))
			ctx := testCtx(t, 20*time.Second)
			l := lc.make(t, c, "fenced")
			key, _ := lockKey(c.cfg.prefix, "fenced")
			counter := redissonName("redisson_lock_token", key)
			var last int64
			for round := range 3 {
				lctx, err := l.Lock(ctx)
				if err != nil {
					t.Fatal(err)
				}
				tok, ok := Fence(lctx)
				if !ok || tok <= last {
					t.Fatalf("round %d: token %d (ok %v), want > %d", round, tok, ok, last)
				}
				last = tok
				pttl, err := node.Do(t, "PTTL", counter).AsInt64()
				if err != nil || pttl <= 0 || pttl > 1000 {
					t.Fatalf("counter PTTL = %d, %v; want the 1s idle time", pttl, err)
				}
				if err := l.Unlock(lctx); err != nil {
					t.Fatal(err)
				}
				if round == 1 {
					continue // a grant within the idle time continues the count
				}
				if !eventually(5*time.Second, func() bool { return !exists(t, node, counter) }) {
					t.Fatal("the counter did not expire")
				}
			}
			assertOnlyLatches(t, node, c.cfg.releaseTimeout)
		})
	}
}

// A grant draws the next token without re-arming the counter's expiry (no
// PEXPIRE per grant): the counter lives the idle time from its start.
func TestFenceCounterNotRearmed(t *testing.T) {
	t.Parallel()
	for _, lc := range fenceCases() {
		if !lc.fence {
			continue
		}
		t.Run(lc.name, func(t *testing.T) {
			node := redistest.Server(t)
			// Room for a loaded machine's stall between the two grants
			// (one of over 6 s let the counter expire at 5 s).
			const idle = 15 * time.Second
			c := newTestClient(t, node.Client(t), WithFenceIdle(idle))
			ctx := testCtx(t, 20*time.Second)
			l := lc.make(t, c, "fenced")
			key, _ := lockKey(c.cfg.prefix, "fenced")
			counter := redissonName("redisson_lock_token", key)
			grant := func() (token, pttl int64) {
				t.Helper()
				lctx, err := l.Lock(ctx)
				if err != nil {
					t.Fatal(err)
				}
				token, _ = Fence(lctx)
				pttl, err = node.Do(t, "PTTL", counter).AsInt64()
				if err != nil || pttl <= 0 || pttl > idle.Milliseconds() {
					t.Fatalf("counter PTTL = %d, %v; want within the %s idle time", pttl, err, idle)
				}
				if err := l.Unlock(lctx); err != nil {
					t.Fatal(err)
				}
				return token, pttl
			}
			tok1, pttl1 := grant()
			time.Sleep(time.Second)
			tok2, pttl2 := grant()
			if tok2 != tok1+1 {
				t.Fatalf("second token %d, want %d (the same counter)", tok2, tok1+1)
			}
			if pttl2 > pttl1-800 {
				t.Fatalf("counter PTTL %d ms a second after %d ms: the grant re-armed its expiry", pttl2, pttl1)
			}
		})
	}
}

// assertOnlyLatches checks that the only keys left are release latches, each
// expiring within the release timeout.
func assertOnlyLatches(t *testing.T, node *redistest.Node, releaseTimeout time.Duration) {
	t.Helper()
	keys, err := node.Do(t, "KEYS", "*").AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, "redisson_unlock_latch:") {
			t.Errorf("key left behind: %s", k)
			continue
		}
		pttl, err := node.Do(t, "PTTL", k).AsInt64()
		if err != nil || (pttl <= 0 && pttl != -2) || time.Duration(pttl)*time.Millisecond > releaseTimeout {
			t.Errorf("release latch %s: PTTL %d ms (%v), want within the %s release timeout", k, pttl, err, releaseTimeout)
		}
	}
}

// After Unlock, Close, expiry and failed acquisitions, the only keys a lock
// leaves are its fencing counter (expiring with the idle time) and release
// latches (expiring within the release timeout).
func TestNoKeysLeftBehind(t *testing.T) {
	t.Parallel()
	for _, lc := range lockCases {
		t.Run(lc.name, func(t *testing.T) {
			node := redistest.Server(t)
			prefix := sharedPrefix(t)
			opts := []Option{prefix, WithWatchdog(600*time.Millisecond, 200*time.Millisecond), WithWaiterTimeout(300 * time.Millisecond)}
			c := newTestClient(t, node.Client(t), opts...)
			other := newTestClient(t, node.Client(t), opts...)
			ctx := testCtx(t, 30*time.Second)
			// Unlock, for many names.
			for i := range 20 {
				l := lc.make(t, c, "order:"+strconv.Itoa(i))
				lctx, err := l.Lock(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if err := l.Unlock(lctx); err != nil {
					t.Fatal(err)
				}
			}
			// A failed acquisition: a TryLock that waited in line and gave up
			// while another Client's owner held the lock (a writer, for the
			// read side).
			holder := lc.make(t, other, "contended")
			if lc.name == "RWMutexRead" {
				holder = mustRW(t, other, "contended")
			}
			hctx, err := holder.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			l := lc.make(t, c, "contended")
			if _, err := l.TryLock(ctx, 200*time.Millisecond); !errors.Is(err, ErrNotAcquired) {
				t.Fatalf("contended TryLock: %v", err)
			}
			if err := holder.Unlock(hctx); err != nil {
				t.Fatal(err)
			}
			// Expiry of an explicit lease.
			if _, err := lc.withLease(l, ctx, 300*time.Millisecond); err != nil {
				t.Fatal(err)
			}
			// Close while holding: the watchdog stops and the lease runs out.
			closing, err := New(node.Client(t), opts...)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := lc.make(t, closing, "closed").Lock(ctx); err != nil {
				t.Fatal(err)
			}
			closing.Close()
			ok := eventually(5*time.Second, func() bool {
				keys, _ := node.Do(t, "KEYS", "*").AsStrSlice()
				for _, k := range keys {
					if !strings.HasPrefix(k, "redisson_unlock_latch:") && !strings.HasPrefix(k, "redisson_lock_token:") {
						return false
					}
				}
				return true
			})
			if !ok {
				keys, _ := node.Do(t, "KEYS", "*").AsStrSlice()
				t.Fatalf("keys left behind: %v", keys)
			}
			keys, _ := node.Do(t, "KEYS", "redisson_lock_token:*").AsStrSlice()
			for _, k := range keys {
				if pttl, err := node.Do(t, "PTTL", k).AsInt64(); err != nil || (pttl < 0 && pttl != -2) || time.Duration(pttl)*time.Millisecond > DefaultFenceIdle {
					t.Errorf("fencing counter %s: PTTL %d (%v), want at most the idle time", k, pttl, err)
				}
			}
			assertLatchesExpire(t, node, c.cfg.releaseTimeout)
		})
	}
}

// assertLatchesExpire checks that every release latch left expires within
// the release timeout.
func assertLatchesExpire(t *testing.T, node *redistest.Node, releaseTimeout time.Duration) {
	t.Helper()
	keys, err := node.Do(t, "KEYS", "redisson_unlock_latch:*").AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		pttl, err := node.Do(t, "PTTL", k).AsInt64()
		if err != nil || (pttl <= 0 && pttl != -2) || time.Duration(pttl)*time.Millisecond > releaseTimeout {
			t.Errorf("release latch %s: PTTL %d ms (%v), want within the %s release timeout", k, pttl, err, releaseTimeout)
		}
	}
}

// A waiter that got its lock does not wait for the unsubscribe that follows:
// leaving a channel returns at once even when the server is slow to confirm.
func TestLeaveDoesNotWaitForUnsubscribe(t *testing.T) {
	t.Parallel()
	p := newProxied(t)
	ctx := testCtx(t, 10*time.Second)
	w, err := p.c.subs.joinWith(ctx, p.c.cfg.prefix+"leave", false)
	if err != nil {
		t.Fatal(err)
	}
	p.px.Freeze()
	defer p.px.Thaw()
	start := time.Now()
	p.c.subs.leave(w)
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Fatalf("leaving the last waiter took %s: the caller waited for UNSUBSCRIBE", d)
	}
}

// A permit acquisition whose reply is lost is bounded by the caller's
// deadline and gives the permit back by its id, instead of leaving it taken
// for its whole lease.
func TestPermitAcquireLostReply(t *testing.T) {
	t.Parallel()
	p := newProxied(t, sharedPrefix(t))
	direct := newTestClient(t, p.node.Client(t), WithKeyPrefix(p.c.cfg.prefix))
	ctx := testCtx(t, 20*time.Second)
	s := mustPermits(t, p.c, "permits")
	watch := mustPermits(t, direct, "permits")
	if ok, err := s.TrySetPermits(ctx, 1); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	if id, err := s.Acquire(ctx, time.Minute); err != nil || s.Release(ctx, id) != nil {
		t.Fatalf("warm-up: %v", err)
	}
	p.px.FreezeReplies()
	res := make(chan error, 1)
	start := time.Now()
	go func() {
		actx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		_, err := s.TryAcquire(actx, time.Minute, 0)
		res <- err
	}()
	if !eventually(3*time.Second, func() bool { n, err := watch.AvailablePermits(ctx); return err == nil && n == 0 }) {
		p.px.Thaw()
		t.Fatal("the acquire script did not reach the server")
	}
	err := <-res
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("TryAcquire with a 500ms deadline returned after %s", d)
	}
	if err == nil {
		t.Fatal("TryAcquire succeeded although its reply never came")
	}
	p.px.DropAll()
	p.px.Thaw()
	if !eventually(10*time.Second, func() bool { n, err := watch.AvailablePermits(ctx); return err == nil && n == 1 }) {
		t.Fatal("the permit taken by the lost acquisition was not given back (it waits for its one-minute lease)")
	}
}

// A Semaphore acquisition whose reply is lost is bounded by the caller's
// deadline and its permits are given back once, through its latch.
func TestSemaphoreAcquireLostReply(t *testing.T) {
	t.Parallel()
	p := newProxied(t)
	direct := newTestClient(t, p.node.Client(t), WithKeyPrefix(p.c.cfg.prefix))
	ctx := testCtx(t, 20*time.Second)
	s := mustSem(t, p.c, "sem")
	watch := mustSem(t, direct, "sem")
	if ok, err := s.TrySetPermits(ctx, 2); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	if err := s.Acquire(ctx, 1); err != nil || s.Release(ctx, 1) != nil {
		t.Fatalf("warm-up: %v", err)
	}
	p.px.FreezeReplies()
	res := make(chan error, 1)
	start := time.Now()
	go func() {
		actx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		err := s.TryAcquire(actx, 2, 0)
		res <- err
	}()
	if !eventually(3*time.Second, func() bool { n, err := watch.AvailablePermits(ctx); return err == nil && n == 0 }) {
		p.px.Thaw()
		t.Fatal("the acquire script did not reach the server")
	}
	err := <-res
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("TryAcquire with a 500ms deadline returned after %s", d)
	}
	if err == nil {
		t.Fatal("TryAcquire succeeded although its reply never came")
	}
	p.px.DropAll()
	p.px.Thaw()
	if !eventually(10*time.Second, func() bool { n, err := watch.AvailablePermits(ctx); return err == nil && n == 2 }) {
		n, _ := watch.AvailablePermits(ctx)
		t.Fatalf("permits taken by the lost acquisition were not given back: %d available, want 2", n)
	}
	time.Sleep(200 * time.Millisecond) // an undo running twice would add them twice
	if n, err := watch.AvailablePermits(ctx); err != nil || n != 2 {
		t.Fatalf("available permits = %d, %v; want exactly 2", n, err)
	}
}

// deadlineOnly is a context whose deadline has passed while its own timer
// has not fired yet (Err is still nil), the moment a call can see first.
type deadlineOnly struct{ context.Context }

func (deadlineOnly) Deadline() (time.Time, bool) { return time.Now().Add(-time.Millisecond), true }

// TestRetrierFailedContextErrors: a call's own timeout (a dial's i/o
// timeout, which errors.Is reads as context.DeadlineExceeded) is no end of
// the caller's context, so it is not reported as one; a call that saw the
// caller's deadline pass before its timer fired is.
func TestRetrierFailedContextErrors(t *testing.T) {
	t.Parallel()
	_, timeout := (&net.Dialer{Timeout: time.Nanosecond}).Dial("tcp", "127.0.0.1:1")
	if !errors.Is(timeout, context.DeadlineExceeded) || !retryLater(timeout) {
		t.Fatalf("dial with a 1ns timeout: %v, want a dial error that errors.Is reads as context.DeadlineExceeded", timeout)
	}
	rt := newRetrier()
	if err := rt.failed(context.Background(), timeout); err != timeout {
		t.Errorf("failed(live ctx, dial timeout) = %v, want the dial error itself", err)
	}
	err := rt.failed(deadlineOnly{context.Background()}, timeout)
	if !strings.HasPrefix(err.Error(), context.DeadlineExceeded.Error()) || !errors.Is(err, timeout) {
		t.Errorf("failed(ctx past its deadline, dial timeout) = %v, want the deadline, after the dial error", err)
	}
}

// An attempt of unknown outcome can reach the server after the undo that
// was to take it back: rueidis closes an idle connection whose call ran past
// its deadline and sends the next call, the undo's, on a new connection,
// while the attempt is still on its way (here held in a proxy). The undo
// looks again a little later, so such a late grant is given back within
// seconds, not left to its lease.
func TestUndoCatchesLateAttempt(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"Mutex", "LeanMutex"} {
		t.Run(kind, func(t *testing.T) {
			node := redistest.Server(t)
			px := netproxy.New(t, node.Addr)
			prefix := sharedPrefix(t)
			c := newTestClient(t, px.Client(t), prefix)
			other := newTestClient(t, node.Client(t), prefix)
			ctx := testCtx(t, 20*time.Second)
			var l, o Locker
			if kind == "Mutex" {
				l, o = mustMutex(t, c, "late"), mustMutex(t, other, "late")
			} else {
				l, o = mustLean(t, c, "late"), mustLean(t, other, "late")
			}
			lctx, err := l.Lock(ctx) // connection open, scripts loaded
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Unlock(lctx); err != nil {
				t.Fatal(err)
			}
			px.HoldOpen()
			tctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			_, err = l.TryLock(tctx, 0)
			cancel()
			if err == nil {
				t.Fatal("TryLock through a held connection succeeded")
			}
			time.Sleep(500 * time.Millisecond) // the undo has looked, on a new connection
			px.Thaw()                          // the attempt reaches the server now
			start := time.Now()
			if !eventually(5*time.Second, func() bool {
				octx, err := o.TryLock(ctx, 0)
				if err != nil {
					return false
				}
				return o.Unlock(octx) == nil
			}) {
				t.Fatalf("TryLock %v after the late attempt reached the server (%v): the lock is still held, want it given back", time.Since(start).Round(time.Millisecond), err)
			}
			t.Logf("free again %v after the late attempt was let through", time.Since(start).Round(time.Millisecond))
		})
	}
}

// TestLateReleaseSparesNewHold: an owner shared through its context whose
// release timed out on a held connection locks again; when the late
// release reaches the server, it must not release the new hold, whose
// token is newer (Mutex, FairMutex on either queue, RWMutex's write and read
// sides, a LeanMutex with or without fencing).
func TestLateReleaseSparesNewHold(t *testing.T) {
	t.Parallel()
	// Each case waits about 10 s for rueidis to give the held connection up.
	sub := waitingSubtests(t)
	defer sub.Wait()
	for _, kind := range []string{"Mutex", "FairMutex", "FairMutexRedissonQueue", "RWMutex", "RWMutexRead", "LeanMutex", "LeanMutexFenced"} {
		sub.Run(kind, func(t *testing.T) {
			node := redistest.Server(t)
			px := netproxy.New(t, node.Addr)
			prefix := sharedPrefix(t)
			c := newTestClient(t, px.Client(t), prefix)
			other := newTestClient(t, node.Client(t), prefix)
			ctx := WithOwner(testCtx(t, 20*time.Second), "worker-7")
			// ls, a handle of the same lock with a short release timeout,
			// makes the release that runs into the held connection; l, with
			// the default, the others, which a loaded machine may keep past
			// a short one. o is the other owner's.
			var handle func(c *Client, opts ...LockOption) Locker
			switch kind {
			case "Mutex":
				handle = func(c *Client, opts ...LockOption) Locker { return mustMutex(t, c, "late-release", opts...) }
			case "FairMutex":
				handle = func(c *Client, opts ...LockOption) Locker { return mustFair(t, c, "late-release", opts...) }
			case "FairMutexRedissonQueue":
				q := WithRedissonFairQueue(5 * time.Second)
				handle = func(c *Client, opts ...LockOption) Locker { return mustFair(t, c, "late-release", append(opts, q)...) }
			case "RWMutex", "RWMutexRead": // the write side
				handle = func(c *Client, opts ...LockOption) Locker { return mustRW(t, c, "late-release", opts...) }
			case "LeanMutex":
				handle = func(c *Client, opts ...LockOption) Locker { return mustLean(t, c, "late-release", opts...) }
			default:
				handle = func(c *Client, opts ...LockOption) Locker {
					return mustLean(t, c, "late-release", append(opts, WithFencing())...)
				}
			}
			l, ls, o := handle(c), handle(c, WithReleaseTimeout(300*time.Millisecond)), handle(other)
			if kind == "RWMutexRead" { // a read hold; the other owner writes
				l, ls = l.(*RWMutex).RLocker(), ls.(*RWMutex).RLocker()
			}
			lctx, err := l.Lock(ctx) // connection open, scripts loaded
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Unlock(lctx); err != nil {
				t.Fatal(err)
			}
			if lctx, err = l.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			px.HoldOpen()
			if err := ls.Unlock(lctx); err == nil {
				t.Fatal("Unlock through a held connection succeeded")
			}
			lctx2, err := l.Lock(ctx) // on a new connection
			if err != nil {
				t.Fatalf("Lock again after the failed release: %v", err)
			}
			px.Thaw() // the late release reaches the server now
			time.Sleep(300 * time.Millisecond)
			if octx, err := o.TryLock(ctx, 0); err == nil {
				_ = o.Unlock(octx)
				t.Fatal("another owner took the lock after the late release reached the server: it released the new hold")
			}
			if err := context.Cause(lctx2); err != nil {
				t.Fatalf("the new hold ended: %v", err)
			}
			if err := l.Unlock(lctx2); err != nil {
				t.Fatalf("Unlock of the new hold: %v", err)
			}
		})
	}
}

// Close stops the undo of an acquisition of unknown outcome that is still
// failing (the server unreachable), but gives it one last attempt and waits
// for it: a process that shuts down after a network fault does not leave
// its lock or permits held until their leases run out.
func TestCloseUndoesUnknownAcquisition(t *testing.T) {
	t.Parallel()
	type target struct {
		acquire func(context.Context) error
		held    func() bool
	}
	// Each case sets its primitive up (scripts loaded) and tells how to
	// acquire it and whether the acquisition is in place.
	cases := map[string]func(t *testing.T, p proxied) target{}
	for _, lc := range lockCases {
		cases[lc.name] = func(t *testing.T, p proxied) target {
			l := lc.make(t, p.c, "close-undo")
			key := p.key(t, "close-undo")
			warm(t, l)
			return target{
				func(ctx context.Context) error { _, err := l.TryLock(ctx, 0); return err },
				func() bool { return exists(t, p.node, key) },
			}
		}
	}
	cases["Semaphore"] = func(t *testing.T, p proxied) target {
		s := mustSem(t, p.c, "close-undo")
		ctx := testCtx(t, 10*time.Second)
		if ok, err := s.TrySetPermits(ctx, 2); err != nil || !ok {
			t.Fatalf("TrySetPermits = %v, %v", ok, err)
		}
		if err := s.Acquire(ctx, 1); err != nil { // scripts loaded
			t.Fatal(err)
		}
		if err := s.Release(ctx, 1); err != nil {
			t.Fatal(err)
		}
		return target{
			func(ctx context.Context) error { return s.TryAcquire(ctx, 1, 0) },
			func() bool { return countAt(t, p.node, s.Key()) < 2 },
		}
	}
	cases["PermitSemaphore"] = func(t *testing.T, p proxied) target {
		s := mustPermits(t, p.c, "close-undo")
		ctx := testCtx(t, 10*time.Second)
		if ok, err := s.TrySetPermits(ctx, 2); err != nil || !ok {
			t.Fatalf("TrySetPermits = %v, %v", ok, err)
		}
		id, err := s.Acquire(ctx, time.Minute) // scripts loaded
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Release(ctx, id); err != nil {
			t.Fatal(err)
		}
		return target{
			func(ctx context.Context) error { _, err := s.TryAcquire(ctx, time.Minute, 0); return err },
			func() bool { return countAt(t, p.node, s.Key()) < 2 },
		}
	}
	for name, open := range cases {
		t.Run(name, func(t *testing.T) {
			// Close's last attempt has the release timeout, less the 100ms
			// the server stays frozen after Close began, to reconnect and
			// undo: 200ms of it was too little on a loaded machine.
			p := newProxied(t, WithReleaseTimeout(time.Second))
			tg := open(t, p)
			p.px.FreezeReplies()
			res := make(chan error, 1)
			go func() {
				actx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				res <- tg.acquire(actx)
			}()
			if !eventually(3*time.Second, tg.held) {
				p.px.Thaw()
				t.Fatal("the acquisition did not reach the server")
			}
			p.px.Freeze() // the undo's requests are held back too
			p.px.DropAll()
			if err := <-res; err == nil {
				t.Fatal("the acquisition succeeded although its reply was lost")
			}
			time.Sleep(1300 * time.Millisecond) // an undo attempt times out meanwhile
			if !tg.held() {
				t.Fatal("undone while the server was unreachable")
			}
			start := time.Now()
			closed := make(chan struct{})
			go func() {
				_ = p.c.Close()
				close(closed)
			}()
			time.Sleep(100 * time.Millisecond)
			p.px.Thaw()
			select {
			case <-closed:
			case <-time.After(5 * time.Second):
				t.Fatal("Close did not return")
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Fatalf("Close took %v, want its last undo bounded by the release timeout", d)
			}
			if tg.held() {
				t.Fatal("Close returned with the acquisition of unknown outcome still in place: it stays held until its lease ends")
			}
		})
	}
}

// With Redis down, Close does not wait a whole release timeout for the last
// attempt to undo an acquisition of unknown outcome: at most a second.
func TestCloseBoundedWhileRedisDown(t *testing.T) {
	t.Parallel()
	p := newProxied(t, WithReleaseTimeout(5*time.Second))
	l := mustMutex(t, p.c, "close-down")
	key := p.key(t, "close-down")
	warm(t, l)
	p.px.FreezeReplies()
	res := make(chan error, 1)
	go func() {
		_, err := l.TryLock(testCtx(t, 5*time.Second), 0)
		res <- err
	}()
	if !eventually(3*time.Second, func() bool { return exists(t, p.node, key) }) {
		p.px.Thaw()
		t.Fatal("the acquire script did not reach the server")
	}
	p.px.Refuse() // the reply is lost, and Redis stays out of reach
	if err := <-res; err == nil {
		t.Fatal("TryLock succeeded although its reply was lost")
	}
	time.Sleep(300 * time.Millisecond) // the undo is failing in the background
	start := time.Now()
	if err := p.c.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2500*time.Millisecond {
		t.Fatalf("Close took %v with Redis down, want its last undo bounded by a second", d)
	}
}

// The counter expired, and Redisson's RFencedLock drew from it first: INCR
// made it again from 1, with no expiry. The next Go grant must lift it above
// every token handed out before (and give it its idle time again); it used
// to continue from 2, so every token after, Go's and Java's, fell below the
// ones a guarded resource had seen, which then refused them all.
func TestFenceCounterRestartedByRedisson(t *testing.T) {
	t.Parallel()
	for _, lc := range fenceCases() {
		if !lc.fence {
			continue
		}
		t.Run(lc.name, func(t *testing.T) {
			t.Parallel() // each case has its own server
			node := redistest.Server(t)
			// An idle time the PTTL read after Lock outlasts on a loaded
			// machine.
			c := newTestClient(t, node.Client(t), WithFenceIdle(3*time.Second))
			ctx := testCtx(t, 30*time.Second)
			l := lc.make(t, c, "fenced")
			key, _ := lockKey(c.cfg.prefix, "fenced")
			counter := redissonName("redisson_lock_token", key)
			lctx, err := l.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			first, _ := Fence(lctx)
			if err := l.Unlock(lctx); err != nil {
				t.Fatal(err)
			}
			if !eventually(10*time.Second, func() bool { return !exists(t, node, counter) }) {
				t.Fatal("the counter did not expire")
			}
			for _, want := range []int64{1, 2} { // RFencedLock's acquisitions: INCR
				if n, err := node.Do(t, "INCR", counter).AsInt64(); err != nil || n != want {
					t.Fatalf("Java's INCR = %d, %v; want %d", n, err, want)
				}
			}
			lctx, err = l.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tok, _ := Fence(lctx); tok <= first {
				t.Fatalf("token %d after Redisson restarted the counter, not above %d handed out before", tok, first)
			}
			if pttl, err := node.Do(t, "PTTL", counter).AsInt64(); err != nil || pttl <= 0 {
				t.Fatalf("counter PTTL = %d, %v; want its idle time again", pttl, err)
			}
			if n, _ := node.Do(t, "INCR", counter).AsInt64(); n <= first {
				t.Fatalf("Java's next token %d, not above %d", n, first)
			}
			if err := l.Unlock(lctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
