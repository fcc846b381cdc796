package scriptlock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

func redlockClients(t *testing.T, nodes []*redistest.Node, opts ...Option) []*Client {
	t.Helper()
	prefix := sharedPrefix(t)
	cs := make([]*Client, len(nodes))
	for i, n := range nodes {
		cs[i] = newTestClient(t, n.Client(t), append([]Option{prefix}, opts...)...)
	}
	return cs
}

// redlockClientsThrough is redlockClients with node i reached through rc.
func redlockClientsThrough(t *testing.T, nodes []*redistest.Node, i int, rc rueidis.Client) []*Client {
	t.Helper()
	cs := redlockClients(t, nodes[:i])
	cs = append(cs, newTestClient(t, rc, sharedPrefix(t)))
	return append(cs, redlockClients(t, nodes[i+1:])...)
}

// held reports which live nodes have the lock key.
func heldOn(t *testing.T, r *RedLock, nodes []*redistest.Node, live ...int) []bool {
	t.Helper()
	out := make([]bool, len(nodes))
	for _, i := range live {
		n, err := nodes[i].Do(t, "EXISTS", r.nodes[i].Key()).AsInt64()
		if err != nil {
			t.Fatalf("EXISTS on node %d: %v", i, err)
		}
		out[i] = n == 1
	}
	return out
}

func TestRedLockLifecycle(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 5)
	cs := redlockClients(t, nodes)
	ctx := testCtx(t, 20*time.Second)
	// A node timeout roomy enough for a loaded machine (the default, 200 ms,
	// let a majority grant the lock without a live node whose answer came
	// later): the test needs every node's answer, not a fast one.
	roomy := WithNodeTimeout(time.Second)
	r := mustRedLock(t, "job", cs, roomy)
	lctx, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range heldOn(t, r, nodes, 0, 1, 2, 3, 4) {
		if !h {
			t.Fatalf("node %d does not hold the lock", i)
		}
	}
	// Another owner is refused: a quorum error caused by contention.
	other := mustRedLock(t, "job", cs, roomy)
	_, err = other.TryLock(ctx, 0)
	var qe *QuorumError
	if !errors.As(err, &qe) || !errors.Is(err, ErrQuorum) || !errors.Is(err, ErrNotAcquired) || qe.Granted != 0 {
		t.Fatalf("contended TryLock: %v", err)
	}
	if _, err := other.TryLock(ctx, 150*time.Millisecond); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("contended TryLock with wait: %v", err)
	}
	if err := other.Unlock(ctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Unlock by another owner: %v, want ErrNotHeld", err)
	}
	if err := r.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	if context.Cause(lctx) != context.Canceled {
		t.Fatalf("cause after Unlock = %v", context.Cause(lctx))
	}
	for i, h := range heldOn(t, r, nodes, 0, 1, 2, 3, 4) {
		if h {
			t.Fatalf("node %d still holds the lock after Unlock", i)
		}
	}
	// Bad input.
	for _, n := range []int{0, 2, 4} {
		if _, err := NewRedLock("x", cs[:n]); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("%d nodes: %v", n, err)
		}
	}
	if _, err := NewRedLock("x", []*Client{cs[0], cs[0], cs[1]}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("duplicate client: %v", err)
	}
	if _, err := NewRedLock("", cs[:3]); !errors.Is(err, ErrInvalidName) {
		t.Fatalf("empty name: %v", err)
	}
}

func TestRedLockTwoNodesDown(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 5)
	cs := redlockClients(t, nodes)
	ctx := testCtx(t, 20*time.Second)
	nodes[0].Kill()
	nodes[3].Kill()
	// A node timeout roomy enough for a loaded machine (the default, 200 ms,
	// once timed out a live node's release): the test needs every live
	// node's answer, not a fast one.
	r := mustRedLock(t, "job", cs, WithNodeTimeout(time.Second))
	lctx, err := r.TryLock(ctx, 2*time.Second)
	if err != nil {
		t.Fatalf("with 3 of 5 nodes up: %v", err)
	}
	if h := heldOn(t, r, nodes, 1, 2, 4); !h[1] || !h[2] || !h[4] {
		t.Fatalf("held = %v", h)
	}
	if err := r.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	if h := heldOn(t, r, nodes, 1, 2, 4); h[1] || h[2] || h[4] {
		t.Fatalf("held after Unlock = %v", h)
	}
}

func TestRedLockThreeNodesDown(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 5)
	cs := redlockClients(t, nodes)
	ctx := testCtx(t, 20*time.Second)
	for _, i := range []int{0, 2, 4} {
		nodes[i].Kill()
	}
	r := mustRedLock(t, "job", cs)
	for _, wait := range []time.Duration{0, 300 * time.Millisecond} {
		_, err := r.TryLock(ctx, wait)
		var qe *QuorumError
		if !errors.As(err, &qe) || !errors.Is(err, ErrQuorum) {
			t.Fatalf("with 2 of 5 nodes up: %v, want ErrQuorum", err)
		}
		if errors.Is(err, ErrNotAcquired) || qe.Granted > 2 || qe.Needed != 3 {
			t.Fatalf("quorum error %+v", qe)
		}
		// Nothing is left held on the live nodes.
		if h := heldOn(t, r, nodes, 1, 3); h[1] || h[3] {
			t.Fatalf("lock left on live nodes after a failed acquisition: %v", h)
		}
	}
	lctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := r.Lock(lctx); !errors.Is(err, ErrQuorum) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock: %v", err)
	}
}

// A frozen node (SIGSTOP) costs at most the per-node timeout: the acquisition
// returns with the other four.
func TestRedLockFrozenNode(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 5)
	cs := redlockClients(t, nodes)
	ctx := testCtx(t, 30*time.Second)
	// A node timeout roomy enough for the live nodes' calls on a loaded
	// machine (at 100ms a CI run under -race saw two live nodes' releases
	// time out), and far below the client's read timeout, which a frozen
	// node would cost without it.
	r := mustRedLock(t, "job", cs, WithNodeTimeout(300*time.Millisecond))
	// Warm every connection first so the freeze, not the dial, is measured
	// (and no late grant of a node is still being undone).
	if err := r.Unlock(lockEveryNode(t, ctx, r)); err != nil {
		t.Fatal(err)
	}
	nodes[2].Pause()
	t.Cleanup(nodes[2].Resume)
	var lctx context.Context
	// A live node answering past the node timeout on a loaded machine is
	// left out of the hold checked below: the Lock, timed each time, is
	// then made again, until the four live nodes granted it.
	for try := 1; ; try++ {
		start := time.Now()
		var err error
		lctx, err = r.Lock(ctx)
		if err != nil {
			t.Fatalf("with one node frozen: %v", err)
		}
		// The frozen node costs its node timeout, not the client's read timeout.
		if d := time.Since(start); d > 1500*time.Millisecond {
			t.Fatalf("Lock with one node frozen took %s; node timeout 300ms", d)
		}
		if held := r.HeldOn(lctx); held == nil || try == 20 || held[0] && held[1] && held[3] && held[4] {
			break
		}
		if err := r.Unlock(lctx); err != nil {
			t.Fatalf("Unlock of a hold a live node did not grant: %v", err)
		}
	}
	if h := heldOn(t, r, nodes, 0, 1, 3, 4); !h[0] || !h[1] || !h[3] || !h[4] {
		t.Fatalf("held = %v", h)
	}
	start := time.Now()
	if err := r.Unlock(lctx); err != nil {
		t.Fatalf("Unlock with one node frozen: %v", err)
	}
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Fatalf("Unlock with one node frozen took %s; node timeout 300ms", d)
	}
}

// The lock context ends with ErrLockLost when fewer than a majority of nodes
// still hold the lock, not before.
func TestRedLockQuorumLost(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 5)
	cs := redlockClients(t, nodes, WithWatchdog(600*time.Millisecond, 100*time.Millisecond))
	ctx := testCtx(t, 20*time.Second)
	// A node timeout roomy enough for a loaded machine: the test needs all
	// five grants, not a fast one.
	r := mustRedLock(t, "job", cs, WithNodeTimeout(300*time.Millisecond))
	lctx := lockEveryNode(t, ctx, r)
	if h := heldOn(t, r, nodes, 0, 1, 2, 3, 4); !h[0] || !h[1] || !h[2] || !h[3] || !h[4] {
		t.Fatalf("held = %v, want all five", h)
	}
	for _, i := range []int{0, 1} {
		if _, err := mustMutex(t, cs[i], "job").ForceUnlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(500 * time.Millisecond) // several renewals
	if lctx.Err() != nil {
		t.Fatalf("lock context ended with 3 of 5 nodes holding: %v", context.Cause(lctx))
	}
	if _, err := mustMutex(t, cs[2], "job").ForceUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lctx.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("lock context alive with 2 of 5 nodes holding")
	}
	if !errors.Is(context.Cause(lctx), ErrLockLost) {
		t.Fatalf("cause = %v, want ErrLockLost", context.Cause(lctx))
	}
	// The two nodes still holding it were given back with the loss.
	if err := r.Unlock(lctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Unlock after the loss: %v, want ErrNotHeld", err)
	}
	if h := heldOn(t, r, nodes, 3, 4); h[3] || h[4] {
		t.Fatalf("held after the loss and Unlock = %v", h)
	}
}

// With an explicit lease the context ends when the validity does.
func TestRedLockValidity(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	ctx := testCtx(t, 20*time.Second)
	const lease = 400 * time.Millisecond
	r := mustRedLock(t, "job", cs, WithLease(lease), WithNodeTimeout(100*time.Millisecond)) // the default, 10 ms, is shorter than a loaded machine's round trip
	lctx, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The context's deadline is the validity: it must fall before the lock
	// expires on every node (each key expires at most its PTTL after the
	// reply came back). When the timer fires is up to the scheduler.
	dl, ok := lctx.Deadline()
	if !ok {
		t.Fatal("an explicit-lease RedLock context has no deadline")
	}
	for i, n := range nodes {
		pttl, err := n.Do(t, "PTTL", r.nodes[i].Key()).AsInt64()
		replied := time.Now()
		if err != nil {
			t.Fatal(err)
		}
		if pttl > 0 && !dl.Before(replied.Add(time.Duration(pttl)*time.Millisecond)) {
			t.Fatalf("node %d: validity ends after the lock expires there", i)
		}
	}
	select {
	case <-lctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("context did not end with the validity")
	}
	if !errors.Is(context.Cause(lctx), ErrLockLost) {
		t.Fatalf("cause = %v", context.Cause(lctx))
	}
	// A lease within the drift allowance can never be valid: refused when the
	// RedLock is made.
	if _, err := NewRedLock("short", cs, WithLease(time.Millisecond)); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("lease below drift: %v, want ErrInvalidArgument", err)
	}
}

// A re-entrant Lock whose attempt misses the quorum gives up only what that
// attempt took: the owner's earlier hold stays on every node, and its
// context stays live. Nodes 1 and 2 are cut off (frozen network) during the
// nested attempt; a release by owner there would give up the outer hold.
func TestRedLockFailedReentryKeepsOuter(t *testing.T) {
	t.Parallel()
	_, cs, pxs := proxiedNodes(t, 3)
	ctx := testCtx(t, 30*time.Second)
	r := mustRedLock(t, "job", cs, WithNodeTimeout(time.Second))
	outer := lockEveryNode(t, ctx, r)
	pxs[1].Freeze()
	pxs[2].Freeze()
	_, err := r.TryLock(outer, 0)
	pxs[1].Thaw()
	pxs[2].Thaw()
	if !errors.Is(err, ErrQuorum) {
		t.Fatalf("re-entrant TryLock with two nodes cut off: %v, want ErrQuorum", err)
	}
	// Whatever of the nested attempt landed late is undone in the
	// background: each node ends with the outer hold alone.
	owner, _ := OwnerFrom(outer)
	for i, m := range r.nodes {
		if !eventually(5*time.Second, func() bool {
			st, err := m.State(WithOwner(ctx, owner))
			return err == nil && st.HoldCount == 1
		}) {
			st, serr := m.State(WithOwner(ctx, owner))
			t.Fatalf("node %d after the failed re-entry (%v): %+v, %v; want the outer hold (1)", i, err, st, serr)
		}
	}
	if outer.Err() != nil {
		t.Fatalf("outer RedLock context ended: %v", context.Cause(outer))
	}
	if _, err := mustRedLock(t, "job", cs).TryLock(ctx, 0); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("another owner while the outer hold lives: %v, want ErrNotAcquired", err)
	}
	if err := r.Unlock(outer); err != nil {
		t.Fatal(err)
	}
}

// The same race through a RedLock: its context must not stay live with
// fewer than a quorum of nodes holding the lock.
func TestRedLockSameOwnerReentryRacesUnlock(t *testing.T) {
	t.Parallel()
	stress(t)
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	ctx := testCtx(t, 120*time.Second) // 200 rounds; a minute on a heavily loaded machine
	r := mustRedLock(t, "job", cs, WithNodeTimeout(time.Second))
	for i := 0; i < 200; i++ {
		octx := WithOwner(ctx, "worker")
		l1, err := r.Lock(octx)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var l2 context.Context
		var lerr error
		start := make(chan struct{})
		wg.Add(2)
		go func() { defer wg.Done(); <-start; l2, lerr = r.Lock(octx) }()
		go func() { defer wg.Done(); <-start; _ = r.Unlock(l1) }()
		close(start)
		wg.Wait()
		if lerr != nil {
			continue
		}
		held := 0
		for _, h := range heldOn(t, r, nodes, 0, 1, 2) {
			if h {
				held++
			}
		}
		if held < r.Quorum() {
			time.Sleep(100 * time.Millisecond) // let any loss be signalled
			if l2.Err() == nil {
				t.Fatalf("iteration %d: RedLock context live with %d of 3 nodes holding the lock", i, held)
			}
		}
		_ = r.Unlock(l2)
	}
}

// WithWatchdog given to NewRedLock is the lease the validity is measured
// against, not the Clients' watchdog lease.
func TestRedLockWatchdogOptionValidity(t *testing.T) {
	t.Parallel()
	_, cs, pxs := proxiedNodes(t, 3)
	ctx := testCtx(t, 30*time.Second)
	const lease = 300 * time.Millisecond
	// The frozen node costs its whole timeout, which with the drift
	// allowance (1% + 2 ms) leaves this lease no validity.
	r := mustRedLock(t, "job", cs, WithWatchdog(lease, 30*time.Millisecond), WithNodeTimeout(lease-5*time.Millisecond))
	// Warm every connection.
	l, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Unlock(l); err != nil {
		// A release past the node timeout on a loaded machine: the
		// connections are warm all the same, and the holds left run out
		// with their lease, unrenewed.
		t.Logf("warm-up Unlock: %v", err)
		time.Sleep(2 * lease)
	}
	pxs[2].Freeze()
	defer pxs[2].Thaw()
	start := time.Now()
	l, err = r.TryLock(ctx, 0)
	elapsed := time.Since(start)
	if err == nil {
		_ = r.Unlock(l)
		t.Fatalf("granted after %s by a majority whose lease is %s: validity must be negative", elapsed, lease)
	}
	var qe *QuorumError
	if !errors.As(err, &qe) || qe.Validity > 0 {
		t.Fatalf("err = %v", err)
	}
}

// Re-entering a held RedLock and unlocking again leaves no contexts behind
// on the nodes' holds.
func TestRedLockReentryDoesNotAccumulate(t *testing.T) {
	t.Parallel()
	stress(t)
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	ctx := testCtx(t, 30*time.Second)
	r := mustRedLock(t, "job", cs, WithNodeTimeout(time.Second))
	outer, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Unlock(outer)
	tracked := func() int {
		m := r.nodes[0]
		owner, _ := OwnerFrom(outer)
		m.c.mu.Lock()
		h := m.c.holds[holdID(m.key, m.c.fieldOf(m, owner))]
		m.c.mu.Unlock()
		h.mu.Lock()
		defer h.mu.Unlock()
		return len(h.ctxs)
	}
	before := tracked()
	for i := 0; i < 200; i++ {
		inner, err := r.Lock(outer)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Unlock(inner); err != nil {
			t.Fatal(err)
		}
	}
	if after := tracked(); after > before {
		t.Fatalf("node 0's hold tracks %d contexts after 200 re-entries (%d before)", after, before)
	}
}

// proxiedNodes starts n independent Redis nodes, each reached through a
// proxy, and a Client on each under one key prefix.
func proxiedNodes(t *testing.T, n int, opts ...Option) ([]*redistest.Node, []*Client, []*netproxy.Proxy) {
	t.Helper()
	prefix := sharedPrefix(t)
	nodes := redistest.Servers(t, n)
	cs := make([]*Client, n)
	pxs := make([]*netproxy.Proxy, n)
	for i, node := range nodes {
		pxs[i] = netproxy.New(t, node.Addr)
		cs[i] = newTestClient(t, pxs[i].Client(t), append([]Option{prefix}, opts...)...)
	}
	return nodes, cs, pxs
}
