package scriptlock

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// extendCase is one lock kind whose explicit-lease holds Extend gives a new
// lease.
type extendCase struct {
	name string
	// lock takes the lock with lease (0: the watchdog's).
	lock   func(ctx context.Context, lease time.Duration) (context.Context, error)
	extend func(ctx, lctx context.Context, lease time.Duration) error
	force  func(ctx context.Context) // deletes the lock behind the holder's back
	pttl   func() int64              // the lock key's PTTL in ms
	// forceUnlock is the kind's ForceUnlock itself, for a check of its own.
	forceUnlock func(ctx context.Context) (bool, error)
	key         string
}

func extendCases(t *testing.T, node *redistest.Node, c *Client) []extendCase {
	pttl := func(key string) func() int64 {
		return func() int64 {
			v, err := node.Do(t, "PTTL", key).AsInt64()
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	lockOf := func(l interface {
		Lock(context.Context) (context.Context, error)
		LockWithLease(context.Context, time.Duration) (context.Context, error)
	}) func(context.Context, time.Duration) (context.Context, error) {
		return func(ctx context.Context, lease time.Duration) (context.Context, error) {
			if lease == 0 {
				return l.Lock(ctx)
			}
			return l.LockWithLease(ctx, lease)
		}
	}
	force := func(f func(context.Context) (bool, error)) func(context.Context) {
		return func(ctx context.Context) {
			if ok, err := f(ctx); !ok || err != nil {
				t.Fatalf("ForceUnlock = %v, %v", ok, err)
			}
		}
	}
	m := mustMutex(t, c, "ext-mutex")
	f := mustFair(t, c, "ext-fair")
	rw := mustRW(t, c, "ext-rw")
	rr := mustRW(t, c, "ext-rw-read")
	lean := mustLean(t, c, "ext-lean")
	return []extendCase{
		{"LeanMutex", lockOf(lean), lean.Extend, force(lean.ForceUnlock), pttl(lean.Key()), lean.ForceUnlock, lean.Key()},
		{"Mutex", lockOf(m), m.Extend, force(m.ForceUnlock), pttl(m.Key()), m.ForceUnlock, m.Key()},
		{"FairMutex", lockOf(f), f.Extend, force(f.ForceUnlock), pttl(f.Key()), f.ForceUnlock, f.Key()},
		{"RWMutexWrite", lockOf(rw), rw.Extend, force(rw.ForceUnlock), pttl(rw.Key()), rw.ForceUnlock, rw.Key()},
		{"RWMutexRead", func(ctx context.Context, lease time.Duration) (context.Context, error) {
			if lease == 0 {
				return rr.RLock(ctx)
			}
			return rr.RLockWithLease(ctx, lease)
		}, rr.Extend, force(rr.ForceUnlock), pttl(rr.Key()), rr.ForceUnlock, rr.Key()},
	}
}

func TestExtend(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	// Margins a loaded 2-core machine meets: the first lease is long enough
	// for Extend to land well within it, the wait past it generous.
	const (
		first    = time.Second
		extended = 6 * time.Second
		past     = first + 700*time.Millisecond
		short    = 300 * time.Millisecond
		slack    = 3 * time.Second
	)
	for _, kc := range extendCases(t, node, c) {
		t.Run(kc.name, func(t *testing.T) {
			ctx := testCtx(t, 30*time.Second)
			lctx, err := kc.lock(ctx, first)
			if err != nil {
				t.Fatal(err)
			}
			if err := kc.extend(ctx, lctx, extended); err != nil {
				t.Fatalf("Extend: %v", err)
			}
			if p := kc.pttl(); p <= first.Milliseconds() || p > extended.Milliseconds() {
				t.Fatalf("PTTL after Extend(%s) = %dms", extended, p)
			}
			// Past the first lease, the hold and its context are alive.
			time.Sleep(past)
			if lctx.Err() != nil {
				t.Fatalf("lock context ended %s after a %s lease extended to %s: %v", past, first, extended, context.Cause(lctx))
			}
			if p := kc.pttl(); p <= 0 {
				t.Fatalf("lock gone from Redis %s after a %s lease extended to %s (PTTL %d)", past, first, extended, p)
			}

			// Bad input is typed and changes nothing.
			before := kc.pttl()
			for _, bad := range []time.Duration{0, -time.Second, time.Microsecond} {
				if err := kc.extend(ctx, lctx, bad); !errors.Is(err, ErrInvalidArgument) {
					t.Errorf("Extend(%s): %v, want ErrInvalidArgument", bad, err)
				}
			}
			if err := kc.extend(ctx, ctx, extended); !errors.Is(err, ErrNotHeld) {
				t.Errorf("Extend with a context naming no owner: %v, want ErrNotHeld", err)
			}
			if err := kc.extend(ctx, WithOwner(ctx, "someone-else"), extended); !errors.Is(err, ErrNotHeld) {
				t.Errorf("Extend by another owner: %v, want ErrNotHeld", err)
			}
			if after := kc.pttl(); after > before || after <= 0 {
				t.Errorf("bad input changed the lease: PTTL %d, then %d", before, after)
			}
			if lctx.Err() != nil {
				t.Fatalf("bad input ended the lock context: %v", context.Cause(lctx))
			}

			// A shorter lease ends the hold sooner, here and on the server.
			start := time.Now()
			if err := kc.extend(ctx, lctx, short); err != nil {
				t.Fatalf("Extend(%s): %v", short, err)
			}
			expires(t, lctx, short+slack)
			if d := time.Since(start); d >= extended {
				t.Fatalf("lock context ended %s after Extend(%s)", d, short)
			}
			if !eventually(slack, func() bool { return kc.pttl() == -2 }) {
				t.Fatalf("lock still in Redis %s after Extend(%s)", slack, short)
			}
			if err := kc.extend(ctx, lctx, extended); !errors.Is(err, ErrNotHeld) {
				t.Fatalf("Extend after the lease ran out: %v, want ErrNotHeld", err)
			}

			// A hold that is gone on the server: ErrNotHeld, and its context ends.
			lctx, err = kc.lock(ctx, extended)
			if err != nil {
				t.Fatal(err)
			}
			kc.force(ctx)
			if err := kc.extend(ctx, lctx, extended); !errors.Is(err, ErrNotHeld) {
				t.Fatalf("Extend of a lost hold: %v, want ErrNotHeld", err)
			}
			if lctx.Err() == nil || !errors.Is(context.Cause(lctx), ErrLockLost) {
				t.Fatalf("lost hold's context: err %v, cause %v; want ended with ErrLockLost", lctx.Err(), context.Cause(lctx))
			}

			// A watchdog hold is renewed by the watchdog: Extend is refused.
			lctx, err = kc.lock(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			before = kc.pttl()
			if err := kc.extend(ctx, lctx, extended); !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("Extend of a watchdog hold: %v, want ErrInvalidArgument", err)
			}
			if after := kc.pttl(); after > before {
				t.Errorf("refused Extend changed the lease: PTTL %d, then %d", before, after)
			}
			kc.force(ctx)
		})
	}
}

func TestExtendMultiLock(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	const first, extended = time.Second, 6 * time.Second
	a, b := mustMutex(t, c, "ext-a", WithLease(first)), mustMutex(t, c, "ext-b", WithLease(first))
	ml := mustMulti(t, []Locker{a, b})
	lctx, err := ml.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := ml.Extend(ctx, lctx, extended); err != nil {
		t.Fatalf("Extend: %v", err)
	}
	time.Sleep(first + 700*time.Millisecond)
	if lctx.Err() != nil {
		t.Fatalf("MultiLock context ended after its lease was extended: %v", context.Cause(lctx))
	}
	for _, m := range []*Mutex{a, b} {
		if st, err := m.State(ctx); err != nil || !st.Locked {
			t.Fatalf("%s after Extend: %+v, %v", m.Name(), st, err)
		}
	}
	// One member lost: the others keep their lease, the error names it, and
	// the MultiLock's context ends as for a loss.
	if _, err := b.ForceUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	err = ml.Extend(ctx, lctx, extended)
	if !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Extend with a lost member: %v, want ErrNotHeld", err)
	}
	expires(t, lctx, 3*time.Second)
	// A member that cannot be extended is refused before anything changes.
	ml2 := mustMulti(t, []Locker{a, plainLocker{b}})
	if err := ml2.Extend(ctx, lctx, extended); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Extend with a member that is no Extender: %v", err)
	}
}

// TestExtendMultiLockRefusedUpFront: a member that would refuse Extend as
// invalid (a watchdog hold, a lease within a RedLock's drift allowance)
// refuses the whole call before any member's lease changes.
func TestExtendMultiLockRefusedUpFront(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	const lease = 5 * time.Second
	cases := []struct {
		name   string
		member func(name string) Locker // the member that refuses
		extend time.Duration
	}{
		{"watchdog member", func(name string) Locker { return mustMutex(t, c, name) }, 10 * time.Second},
		{"watchdog member of a nested MultiLock", func(name string) Locker {
			return mustMulti(t, []Locker{mustMutex(t, c, name+"-x", WithLease(lease)), mustMutex(t, c, name)})
		}, 10 * time.Second},
		{"member of a nested MultiLock that is no Extender", func(name string) Locker {
			return mustMulti(t, []Locker{mustMutex(t, c, name+"-x", WithLease(lease)), plainLocker{mustMutex(t, c, name, WithLease(lease))}})
		}, 10 * time.Second},
		{"RedLock, lease within its drift", func(name string) Locker {
			return mustRedLock(t, name, redlockClients(t, redistest.Servers(t, 3)), WithLease(lease), WithNodeTimeout(400*time.Millisecond))
		}, 2 * time.Millisecond},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := mustMutex(t, c, "upfront-a"+strconv.Itoa(i), WithLease(lease))
			ml := mustMulti(t, []Locker{a, tc.member("upfront-b" + strconv.Itoa(i))})
			lctx, err := ml.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			err = ml.Extend(ctx, lctx, tc.extend)
			if !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("Extend by %s: %v, want ErrInvalidArgument", tc.extend, err)
			}
			pttl, perr := node.Do(t, "PTTL", a.Key()).AsInt64()
			if perr != nil || pttl <= 3000 || pttl > lease.Milliseconds() {
				t.Fatalf("the other member's PTTL after the refused Extend: %d ms, %v; want its lease of %s unchanged", pttl, perr, lease)
			}
			if lctx.Err() != nil {
				t.Fatalf("MultiLock context ended: %v", context.Cause(lctx))
			}
			if err := ml.Unlock(lctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// plainLocker hides every method but Locker's.
type plainLocker struct{ Locker }

func TestExtendRedLock(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	ctx := testCtx(t, 30*time.Second)
	const first, extended = time.Second, 6 * time.Second
	// Node timeout: the default (a hundredth of the lease) is shorter than a
	// loaded machine's round trip, and this test is about Extend, not
	// timeouts; it needs all three grants (250 ms once missed one).
	r := mustRedLock(t, "ext-job", cs, WithLease(first), WithNodeTimeout(400*time.Millisecond))
	// Every node granted: each node's PTTL is checked, and nodes 0 and 1
	// are the two lost (a node answering past the node timeout is left out).
	lctx := lockEveryNode(t, ctx, r)
	dl0, _ := lctx.Deadline()
	if err := r.Extend(ctx, lctx, extended); err != nil {
		t.Fatalf("Extend: %v", err)
	}
	dl1, ok := lctx.Deadline()
	if !ok || !dl1.After(dl0.Add(extended-first-time.Second)) {
		t.Fatalf("validity %v did not move from %v by about %s", dl1, dl0, extended-first)
	}
	for i, n := range nodes {
		pttl, err := n.Do(t, "PTTL", r.nodes[i].Key()).AsInt64()
		if err != nil || pttl <= first.Milliseconds() {
			t.Fatalf("node %d: PTTL after Extend = %d, %v", i, pttl, err)
		}
		// The validity still ends before the lock can expire on the node.
		if !dl1.Before(time.Now().Add(time.Duration(pttl) * time.Millisecond)) {
			t.Fatalf("node %d: validity ends after the lock expires there", i)
		}
	}
	// A lease within the drift allowance (2 ms + 1 %) could never be
	// valid: refused before any node's lock is shortened.
	if err := r.Extend(ctx, lctx, 2*time.Millisecond); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Extend by 2ms: %v, want ErrInvalidArgument", err)
	}
	for i, n := range nodes {
		if pttl, err := n.Do(t, "PTTL", r.nodes[i].Key()).AsInt64(); err != nil || pttl <= first.Milliseconds() {
			t.Fatalf("node %d: PTTL after a refused Extend = %d, %v", i, pttl, err)
		}
	}
	time.Sleep(first + 700*time.Millisecond)
	if lctx.Err() != nil {
		t.Fatalf("RedLock context ended after its lease was extended: %v", context.Cause(lctx))
	}
	// Lost on two of three nodes, as an expiry or a failover loses it: no
	// quorum, ErrQuorum and ErrNotHeld. (A ForceUnlock through the RedLock's
	// own Clients would end their holds at once, and the RedLock's context
	// with them, before Extend could find the loss.)
	for _, i := range []int{0, 1} {
		if n, err := nodes[i].Do(t, "DEL", r.nodes[i].Key()).AsInt64(); err != nil || n != 1 {
			t.Fatalf("node %d: DEL = %d, %v", i, n, err)
		}
	}
	err := r.Extend(ctx, lctx, extended)
	if !errors.Is(err, ErrQuorum) || !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Extend with two nodes lost: %v, want ErrQuorum and ErrNotHeld", err)
	}
	expires(t, lctx, 3*time.Second)
	// Watchdog RedLocks are renewed by the nodes: Extend is refused.
	w := mustRedLock(t, "ext-watchdog", cs, WithNodeTimeout(time.Second)) // as above: not a timeout test
	wctx, err := w.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Extend(ctx, wctx, extended); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Extend of a watchdog RedLock: %v, want ErrInvalidArgument", err)
	}
	if err := w.Unlock(wctx); err != nil {
		t.Fatal(err)
	}
}

// An Extend whose reply is lost may have set a shorter lease on the server:
// the lock context must not outlive it.
func TestExtendLostReplyShortens(t *testing.T) {
	t.Parallel()
	p := newProxied(t)
	m := mustMutex(t, p.c, "ext-lost-reply")
	ctx := testCtx(t, 30*time.Second)
	const long, short, slack = 20 * time.Second, 500 * time.Millisecond, 3 * time.Second
	lctx, err := m.LockWithLease(ctx, long)
	if err != nil {
		t.Fatal(err)
	}
	p.px.FreezeReplies()
	actx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	start := time.Now()
	err = m.Extend(actx, lctx, short)
	cancel()
	p.px.Thaw()
	if err == nil {
		t.Fatal("Extend succeeded although its reply was frozen")
	}
	expires(t, lctx, short+slack-time.Since(start))
}

// TestForceUnlockEndsOwnHolds: ForceUnlock ends the holds the same Client
// has of the lock at once (their contexts with ErrLockLost), rather than
// leaving them live until their lease or next renewal says the lock is gone.
func TestForceUnlockEndsOwnHolds(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	for _, tc := range extendCases(t, node, c) {
		for _, lease := range []time.Duration{10 * time.Second, 0} {
			lctx, err := tc.lock(ctx, lease)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			tc.force(ctx)
			select {
			case <-lctx.Done():
				if !errors.Is(context.Cause(lctx), ErrLockLost) {
					t.Errorf("%s (lease %s): context ended with %v, want ErrLockLost", tc.name, lease, context.Cause(lctx))
				}
			case <-time.After(time.Second):
				t.Errorf("%s (lease %s): hold's context still live 1s after ForceUnlock by its own Client", tc.name, lease)
			}
		}
	}
}

// A ForceUnlock whose reply is lost is made again. The repeat must not
// delete the lock another Client took in between (a woken waiter does so at
// once), and the holds this Client had from before the call must end at once
// all the same, as after a ForceUnlock that was answered.
func TestForceUnlockReplyLostEndsOwnHolds(t *testing.T) {
	t.Parallel()
	p := newProxied(t)
	ctx := testCtx(t, 60*time.Second)
	// Another Client on the same keys, connected directly: its calls go
	// through while the proxy holds this Client's replies back.
	others := map[string]extendCase{}
	for _, tc := range extendCases(t, p.node, newTestClient(t, p.node.Client(t), WithKeyPrefix(p.c.cfg.prefix))) {
		others[tc.name] = tc
	}
	for _, tc := range extendCases(t, p.node, p.c) {
		t.Run(tc.name, func(t *testing.T) {
			other := others[tc.name]
			// Scripts loaded, so the ForceUnlock below is one EVALSHA.
			if _, err := tc.lock(ctx, 0); err != nil {
				t.Fatal(err)
			}
			tc.force(ctx)
			lctx, err := tc.lock(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			var octx context.Context
			var oerr error
			err = p.lostDeletionReply(t, func() bool {
				if exists(t, p.node, tc.key) {
					return false
				}
				if octx == nil && oerr == nil {
					octx, oerr = other.lock(ctx, 0)
				}
				return true
			}, func() error {
				_, err := tc.forceUnlock(ctx)
				return err
			})
			if err != nil {
				t.Fatalf("ForceUnlock whose reply was lost: %v", err)
			}
			if oerr != nil {
				t.Fatalf("the other Client's Lock after the ForceUnlock ran: %v", oerr)
			}
			select {
			case <-lctx.Done():
				if !errors.Is(context.Cause(lctx), ErrLockLost) {
					t.Errorf("context ended with %v, want ErrLockLost", context.Cause(lctx))
				}
			case <-time.After(time.Second):
				t.Fatal("hold's context still live 1s after a ForceUnlock (reply lost) by its own Client")
			}
			if !exists(t, p.node, tc.key) || octx.Err() != nil {
				t.Fatalf("the lock another Client took after the ForceUnlock ran is gone (its context: %v): the repeat of the ForceUnlock deleted it", context.Cause(octx))
			}
			if ok, err := other.forceUnlock(ctx); err != nil || !ok {
				t.Fatalf("ForceUnlock = %v, %v", ok, err)
			}
		})
	}
}
