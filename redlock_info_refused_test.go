package scriptlock

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRedLockRefusesNodesWithoutInfo: an ACL user without INFO leaves a
// RedLock no way to tell whether two nodes reach one server. Its first Lock
// fails with ErrInvalidArgument, naming the node and the server's NOPERM,
// and leaves nothing held. The refusal was kept as a run_id compared with
// nothing: two Clients reaching one server under two addresses (here,
// directly and through a proxy) were counted as two nodes, and the lock was
// taken on one server's grants and one other's.
func TestRedLockRefusesNodesWithoutInfo(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 2)
	for _, n := range nodes {
		if err := n.Do(t, "ACL", "SETUSER", "app", "on", ">pw", "~*", "&*", "+@all", "-info").Error(); err != nil {
			t.Fatalf("ACL SETUSER: %v", err)
		}
	}
	px := netproxy.New(t, nodes[0].Addr) // the same server under another address
	app := func(addr string) rueidis.Client {
		return nodes[0].Client(t, func(o *rueidis.ClientOption) {
			o.InitAddress = []string{addr}
			o.Username, o.Password = "app", "pw"
		})
	}
	prefix := redistest.Prefix(t)
	cs := []*Client{
		newTestClient(t, app(nodes[0].Addr), WithKeyPrefix(prefix+"a:")),
		newTestClient(t, app(nodes[1].Addr), WithKeyPrefix(prefix+"b:")),
		newTestClient(t, app(px.Addr), WithKeyPrefix(prefix+"c:")),
	}
	r := mustRedLock(t, "no-info", cs, WithNodeTimeout(time.Second))
	ctx := testCtx(t, 20*time.Second)
	for range 2 {
		lctx, err := r.TryLock(ctx, 0)
		if err == nil {
			r.Unlock(lctx)
			t.Fatal("RedLock whose nodes refuse INFO (two of them on one server) took the lock")
		}
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "NOPERM") {
			t.Fatalf("TryLock returned %v, want ErrInvalidArgument naming NOPERM", err)
		}
		t.Log(err)
	}
	for i, n := range []*redistest.Node{nodes[0], nodes[1], nodes[0]} {
		if k, err := n.Do(t, "EXISTS", r.nodes[i].Key()).AsInt64(); err != nil || k != 0 {
			t.Fatalf("node %d: the lock key exists (%d, %v)", i, k, err)
		}
	}
}
