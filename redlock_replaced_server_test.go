package scriptlock

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// replaceableNodes is three nodes for a RedLock, each Client keeping the
// run_ids it reads for keep; node 2's Client dials a name (rc) whose
// address replaceNodeTwo moves to node 0's server.
type replaceableNodes struct {
	nodes  []*redistest.Node
	rc     rueidis.Client
	target *atomic.Value
	cs     []*Client
}

func newReplaceableNodes(t *testing.T, keep time.Duration) replaceableNodes {
	t.Helper()
	nodes := redistest.Servers(t, 3)
	target := &atomic.Value{}
	target.Store(nodes[2].Addr)
	rc, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress:  []string{"redis-c.internal:6379"},
		DisableCache: true,
		DialCtxFn: func(ctx context.Context, _ string, d *net.Dialer, _ *tls.Config) (net.Conn, error) {
			return d.DialContext(ctx, "tcp", target.Load().(string))
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.Close)
	prefix := redistest.Prefix(t)
	cs := []*Client{
		newTestClient(t, nodes[0].Client(t), WithKeyPrefix(prefix+"a:")),
		newTestClient(t, nodes[1].Client(t), WithKeyPrefix(prefix+"b:")),
		newTestClient(t, rc, WithKeyPrefix(prefix+"c:")),
	}
	for _, c := range cs {
		c.runKeep = keep
	}
	return replaceableNodes{nodes: nodes, rc: rc, target: target, cs: cs}
}

// replaceNodeTwo kills node 2's server and points its name at node 0's,
// waits until r's node 2 reaches it, and has another owner hold node 1: a
// RedLock that counts node 0's server twice then takes the lock.
func (n replaceableNodes) replaceNodeTwo(ctx context.Context, t *testing.T, r *RedLock) {
	t.Helper()
	n.target.Store(n.nodes[0].Addr)
	n.nodes[2].Kill()
	want, err := n.nodes[0].Do(t, "INFO", "server").ToString()
	if err != nil {
		t.Fatal(err)
	}
	if !eventually(5*time.Second, func() bool {
		info, err := n.rc.Do(ctx, n.rc.B().Info().Section("server").Build()).ToString()
		return err == nil && infoField(info, "run_id") == infoField(want, "run_id")
	}) {
		t.Fatal("node 2's Client does not reach node 0's server")
	}
	if !eventually(5*time.Second, func() bool {
		l, err := r.nodes[2].TryLock(WithOwner(ctx, "probe"), 0)
		return err == nil && r.nodes[2].Unlock(l) == nil
	}) {
		t.Fatal("node 2's lock calls do not reach node 0's server")
	}
	if _, err := r.nodes[1].TryLock(WithOwner(ctx, "other"), 0); err != nil {
		t.Fatal(err)
	}
}

// lockRefusedOnOneServer fails the test unless r's TryLock is refused with
// ErrInvalidArgument (two nodes reach one server); taken says what a grant
// would show.
func lockRefusedOnOneServer(ctx context.Context, t *testing.T, r *RedLock, taken string) {
	t.Helper()
	lctx, err := r.TryLock(ctx, 0)
	if err == nil {
		_ = r.Unlock(lctx)
		t.Fatal(taken)
	}
	if !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("TryLock: %v, want ErrInvalidArgument", err)
	}
}

// TestRedLockNodeReplacedRechecked: a RedLock that compared its nodes once
// and is used on keeps comparing them: a node's server replaced under its
// address (its name resolving to another server, here the one another
// node reaches) has a new run_id. Once the run_ids the Clients kept run
// out, the RedLock is refused, as a RedLock made then is; it checked its
// nodes once for good, and with the third node held by another owner took
// the lock on one server's grants.
func TestRedLockNodeReplacedRechecked(t *testing.T) {
	t.Parallel()
	const keep = 200 * time.Millisecond
	n := newReplaceableNodes(t, keep)
	ctx := testCtx(t, 20*time.Second)
	r := mustRedLock(t, "replaced", n.cs, roomyNodeTimeout) // every node answers each attempt
	lctx, err := r.TryLock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	n.replaceNodeTwo(ctx, t, r)
	time.Sleep(keep + 50*time.Millisecond)
	lockRefusedOnOneServer(ctx, t, r, "RedLock took the lock on nodes 0 and 2, which now reach one server")
}
