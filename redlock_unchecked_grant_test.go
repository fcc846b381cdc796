package scriptlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRedLockUncheckedNodeGrantChecked: a node whose run_id went unasked
// (it did not answer INFO once, and is paused before it is asked again)
// but which grants the lock is not silent: its run_id is asked before the
// grant counts. Here it reaches, through a proxy, the server another node
// reaches, and with a third node held by another owner the two made the
// quorum: the lock was taken on one server's grants.
func TestRedLockUncheckedNodeGrantChecked(t *testing.T) {
	t.Parallel()
	_, px, cs := oneServerTwiceClients(t)
	ctx := testCtx(t, 20*time.Second)
	leaveNode2Unchecked(t, ctx, px, cs)
	// Another owner holds node 1.
	other := mustRedLock(t, "unchecked", cs)
	if _, err := other.nodes[1].TryLock(WithOwner(ctx, "other"), 0); err != nil {
		t.Fatal(err)
	}
	r2 := mustRedLock(t, "unchecked", cs)
	lctx, err := r2.TryLock(ctx, 0)
	wantUncheckedRefused(t, r2, lctx, err)
}

// TestRedLockUncheckedNodeGrantCheckedOnRetry: as above, with the lock
// granted to a later attempt of the same TryLock, the first one refused on
// every node: that attempt's grant of the unchecked node counted unchecked.
func TestRedLockUncheckedNodeGrantCheckedOnRetry(t *testing.T) {
	t.Parallel()
	_, px, cs := oneServerTwiceClients(t)
	ctx := testCtx(t, 20*time.Second)
	leaveNode2Unchecked(t, ctx, px, cs)
	// Another owner holds every node; it gives back nodes 0 and 2 while
	// the TryLock below waits.
	other := mustRedLock(t, "unchecked", cs)
	octx := WithOwner(ctx, "other")
	var held [3]context.Context
	for i := range 3 {
		// Made again on an error other than a refusal: on a loaded machine
		// the new connection through the thawed proxy can miss the call's
		// deadline (dial tcp: i/o timeout).
		for try := 0; ; try++ {
			l, err := other.nodes[i].TryLock(octx, 0)
			if err == nil {
				held[i] = l
				break
			}
			if errors.Is(err, ErrNotAcquired) || try == 4 {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	go func() {
		time.Sleep(150 * time.Millisecond)
		_ = other.nodes[0].Unlock(held[0])
		_ = other.nodes[2].Unlock(held[2])
	}()
	// The wait is long beside the 150 ms: a loaded machine's wake can come
	// late. Past node 2's pause (runAskMin) its run_id is asked before the
	// grant, which refuses the lock the same way; within it, as on a quiet
	// machine, the grant is what gets it asked.
	r2 := mustRedLock(t, "unchecked", cs)
	lctx, err := r2.TryLock(ctx, 3*time.Second)
	wantUncheckedRefused(t, r2, lctx, err)
}

// oneServerTwiceClients is three Clients of two servers (nodes), each
// under a key prefix of its own: the third reaches the first server, as
// the first Client does, but through px.
func oneServerTwiceClients(t *testing.T) ([]*redistest.Node, *netproxy.Proxy, []*Client) {
	t.Helper()
	nodes := redistest.Servers(t, 2)
	px := netproxy.New(t, nodes[0].Addr)
	prefix := redistest.Prefix(t)
	return nodes, px, []*Client{
		newTestClient(t, nodes[0].Client(t), WithKeyPrefix(prefix+"a:")),
		newTestClient(t, nodes[1].Client(t), WithKeyPrefix(prefix+"b:")),
		newTestClient(t, rawClient(t, px.Addr), WithKeyPrefix(prefix+"c:")),
	}
}

// leaveNode2Unchecked has a RedLock's first TryLock find node 2 silent
// (px frozen): its INFO goes unanswered, and it is paused (a second,
// runAskMin), its run_id unasked. The node timeout of that TryLock is short
// beside the pause, and the proxy thawed before its Unlock (which would
// otherwise wait that long again for node 2), so that what follows runs
// within the pause; the RedLocks that follow have mustRedLock's roomy one.
func leaveNode2Unchecked(t *testing.T, ctx context.Context, px *netproxy.Proxy, cs []*Client) {
	t.Helper()
	// On a loaded machine the INFO can still be answered: sent late, it
	// reaches the thawed proxy within its node timeout, and node 2's run_id
	// is known. That attempt leaves nothing paused, and is made again.
	for try := 1; ; try++ {
		if tryLeaveNode2Unchecked(t, ctx, px, cs) {
			return
		}
		if try == 5 {
			t.Fatalf("node 2 not paused after %d TryLocks with its proxy frozen: its INFO was answered each time", try)
		}
		t.Logf("node 2's INFO answered after the proxy thawed (try %d): again", try)
	}
}

// tryLeaveNode2Unchecked is one try of leaveNode2Unchecked: whether node 2
// was left paused (else its run_id, told, is forgotten).
func tryLeaveNode2Unchecked(t *testing.T, ctx context.Context, px *netproxy.Proxy, cs []*Client) bool {
	t.Helper()
	px.Freeze()
	r := mustRedLock(t, "unchecked", cs, WithNodeTimeout(200*time.Millisecond))
	lctx, err := r.TryLock(ctx, 0)
	px.Thaw()
	if err == nil {
		_ = r.Unlock(lctx)
	}
	// A grant that Unlock (200 ms a node) or the attempt's undo has not yet
	// given back on a loaded machine would hold its node for the lease, and
	// refuse the test's own Locks there: waited for, Unlock asked again.
	if !eventually(10*time.Second, func() bool {
		for i, m := range r.nodes {
			n, err := cs[i].rc.Do(ctx, cs[i].rc.B().Exists().Key(m.Key()).Build()).AsInt64()
			if err != nil || n != 0 {
				if lctx != nil {
					_ = r.Unlock(lctx)
				}
				return false
			}
		}
		return true
	}) {
		t.Fatal("the first TryLock's grants still held after 10 s")
	}
	// The pause is a second: on a loaded machine what follows can take
	// longer, and node 2, asked again once it is over, would be checked.
	// It is made to last the test.
	// An INFO still in flight (its answer late on a loaded machine) would
	// tell the run_id after all: waited for, and its answer dropped, as if
	// it had been lost.
	c := cs[2]
	if !eventually(10*time.Second, func() bool {
		c.runMu.Lock()
		defer c.runMu.Unlock()
		return len(c.runAsked) == 0
	}) {
		t.Fatal("node 2's INFO still in flight after 10 s")
	}
	c.runMu.Lock()
	paused := len(c.runAsk)
	for addr, p := range c.runAsk {
		p.at = time.Now().Add(time.Minute)
		c.runAsk[addr] = p
	}
	clear(c.runIDsOf)
	c.runMu.Unlock()
	return paused > 0
}

// wantUncheckedRefused checks that a TryLock of r (lctx, err) over the
// Clients of oneServerTwiceClients, node 2's run_id unasked, was refused
// with ErrInvalidArgument.
func wantUncheckedRefused(t *testing.T, r *RedLock, lctx context.Context, err error) {
	t.Helper()
	if err == nil {
		_ = r.Unlock(lctx)
		t.Fatal("RedLock took the lock on nodes 0 and 2, which reach one server, node 2's run_id unasked")
	}
	if !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("TryLock: %v, want ErrInvalidArgument", err)
	}
	t.Log(err)
}
