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

// TestRedLockRecheckedWhenKeptRunIDsRunOut: a RedLock whose check read
// run_ids its nodes' Clients had kept for a while (another RedLock over them
// asked them first) checks its nodes again once those run out, not a whole
// keeping time after its own check: a node's server replaced meanwhile
// (its name now resolving to the server another node reaches) counted that
// server twice toward the quorum until then.
func TestRedLockRecheckedWhenKeptRunIDsRunOut(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	var target atomic.Value
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
	const keep = 3 * time.Second
	for _, c := range cs {
		c.runKeep = keep
	}
	ctx := testCtx(t, 30*time.Second)
	// The run_ids are asked, and kept, by the first RedLock.
	first := mustRedLock(t, "kept-first", cs)
	asked := time.Now()
	lctx, err := first.TryLock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(keep / 2)
	// The second checks its nodes with the run_ids kept.
	r := mustRedLock(t, "kept-second", cs)
	lctx, err = r.TryLock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	// Node 2's server goes; its name now leads to node 0's.
	target.Store(nodes[0].Addr)
	nodes[2].Kill()
	if !eventually(5*time.Second, func() bool {
		l, err := r.nodes[2].TryLock(WithOwner(ctx, "probe"), 0)
		return err == nil && r.nodes[2].Unlock(l) == nil
	}) {
		t.Fatal("node 2's lock calls do not reach node 0's server")
	}
	if _, err := r.nodes[1].TryLock(WithOwner(ctx, "other"), 0); err != nil {
		t.Fatal(err)
	}
	// The run_ids read have run out; the second RedLock's own check is
	// not a keeping time old yet.
	time.Sleep(time.Until(asked.Add(keep + keep/6)))
	lctx, err = r.TryLock(ctx, 0)
	if err == nil {
		_ = r.Unlock(lctx)
		t.Fatal("RedLock took the lock on nodes 0 and 2, which now reach one server, with the run_ids it read run out")
	}
	if !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("TryLock: %v, want ErrInvalidArgument", err)
	}
}
