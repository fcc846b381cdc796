package scriptlock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRedLockRefusesNodesOnOneRestartedServer: a Client keeps its servers'
// run_ids, and a server restarted at the same address has a new one. A
// RedLock over that Client and another Client made since for the same
// address reaches one server twice: it is refused as any RedLock whose
// nodes reach one server, not taken on the old run_id the first Client kept
// and the new one the other read.
func TestRedLockRefusesNodesOnOneRestartedServer(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	ctx := testCtx(t, 20*time.Second)
	r, err := NewRedLock("restarted", cs, roomyNodeTimeout)
	if err != nil {
		t.Fatal(err)
	}
	// cs[0] keeps nodes[0]'s run_id: read, as every node granted.
	if err := r.Unlock(lockEveryNode(t, ctx, r)); err != nil {
		t.Fatal(err)
	}
	nodes[0].Restart(t)
	reconnected(ctx, t, cs[0])
	again := newTestClient(t, nodes[0].Client(t), WithKeyPrefix(redistest.Prefix(t)+"again:"))
	r2, err := NewRedLock("restarted", []*Client{cs[0], again, cs[1]}, roomyNodeTimeout)
	if err != nil {
		t.Fatal(err)
	}
	lctx, err := r2.TryLock(ctx, 0)
	if err == nil {
		_ = r2.Unlock(lctx)
		t.Fatal("RedLock over two Clients of one restarted server (of three) took the lock")
	}
	if !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("TryLock returned %v, want ErrInvalidArgument", err)
	}
	t.Log(err)
}

// TestRedLockRefusesNodesOnOneServerTwoAddresses: Clients that reach one
// server under two addresses (here, one through a proxy) are told apart by
// the server's run_id alone: the RedLock is refused.
func TestRedLockRefusesNodesOnOneServerTwoAddresses(t *testing.T) {
	t.Parallel()
	nodes, _, cs := oneServerTwiceClients(t)
	r, err := NewRedLock("two-addresses", cs, roomyNodeTimeout)
	if err != nil {
		t.Fatal(err)
	}
	lctx, err := r.TryLock(testCtx(t, 10*time.Second), 0)
	if err == nil {
		_ = r.Unlock(lctx)
		t.Fatal("RedLock over two Clients of one server (of three) took the lock")
	}
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "run_id") {
		t.Fatalf("TryLock returned %v, want ErrInvalidArgument naming the run_id", err)
	}
	for i, n := range []*redistest.Node{nodes[0], nodes[1], nodes[0]} {
		if k, err := n.Do(t, "EXISTS", r.nodes[i].Key()).AsInt64(); err != nil || k != 0 {
			t.Fatalf("node %d: the lock key exists (%d, %v)", i, k, err)
		}
	}
}

// TestRedLockRunIDKeptForAWhile: a server restarted at its address and
// reached by a Client made since under another address (here, through a
// proxy) has a new run_id, which that Client reads; the run_id another
// Client kept from before the restart is asked again once kept a while, so
// a RedLock made over both is then refused, not taken on one server's
// grants for as long as the first Client lives.
func TestRedLockRunIDKeptForAWhile(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	const keep = 200 * time.Millisecond
	cs[0].runKeep = keep
	ctx := testCtx(t, 20*time.Second)
	r, err := NewRedLock("kept", cs, roomyNodeTimeout)
	if err != nil {
		t.Fatal(err)
	}
	// cs[0] keeps nodes[0]'s run_id: read, as every node granted.
	if err := r.Unlock(lockEveryNode(t, ctx, r)); err != nil {
		t.Fatal(err)
	}
	nodes[0].Restart(t)
	reconnected(ctx, t, cs[0])
	px := netproxy.New(t, nodes[0].Addr)
	again := newTestClient(t, rawClient(t, px.Addr), WithKeyPrefix(redistest.Prefix(t)+"again:"))
	time.Sleep(keep + 50*time.Millisecond)
	r2, err := NewRedLock("kept", []*Client{cs[0], again, cs[1]}, roomyNodeTimeout)
	if err != nil {
		t.Fatal(err)
	}
	lctx, err := r2.TryLock(ctx, 0)
	if err == nil {
		_ = r2.Unlock(lctx)
		t.Fatal("RedLock over two Clients of one restarted server (of three), one of them under another address, took the lock")
	}
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "run_id") {
		t.Fatalf("TryLock returned %v, want ErrInvalidArgument naming the run_id", err)
	}
	t.Log(err)
}

// reconnected waits until c's connection, broken by its server's restart,
// answers again: an attempt of c failing on it would leave a legitimate
// majority of the other two nodes (two servers), which these tests would
// read as a lock taken on one server's grants.
func reconnected(ctx context.Context, t *testing.T, c *Client) {
	t.Helper()
	if !eventually(5*time.Second, func() bool { return c.rc.Do(ctx, c.rc.B().Ping().Build()).Error() == nil }) {
		t.Fatal("the Client of the restarted server does not reconnect")
	}
}
