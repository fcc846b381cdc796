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

// TestRedLockNodeReplacedRechecked: a RedLock that compared its nodes once
// and is used on keeps comparing them: a node's server replaced under its
// address (its name resolving to another server, here the one another
// node reaches) has a new run_id. Once the run_ids the Clients kept run
// out, the RedLock is refused, as a RedLock made then is; it checked its
// nodes once for good, and with the third node held by another owner took
// the lock on one server's grants.
func TestRedLockNodeReplacedRechecked(t *testing.T) {
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
	const keep = 200 * time.Millisecond
	for _, c := range cs {
		c.runKeep = keep
	}
	ctx := testCtx(t, 20*time.Second)
	r := mustRedLock(t, "replaced", cs)
	lctx, err := r.TryLock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	// Node 2's server goes; its name now leads to node 0's.
	target.Store(nodes[0].Addr)
	nodes[2].Kill()
	want, err := nodes[0].Do(t, "INFO", "server").ToString()
	if err != nil {
		t.Fatal(err)
	}
	if !eventually(5*time.Second, func() bool {
		info, err := rc.Do(ctx, rc.B().Info().Section("server").Build()).ToString()
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
	time.Sleep(keep + 50*time.Millisecond)
	lctx, err = r.TryLock(ctx, 0)
	if err == nil {
		_ = r.Unlock(lctx)
		t.Fatal("RedLock took the lock on nodes 0 and 2, which now reach one server")
	}
	if !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("TryLock: %v, want ErrInvalidArgument", err)
	}
	t.Log(err)
}
