package scriptlock

import (
	"context"
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// dialedClient is a rueidis client whose address is addr, as rueidis names
// it, but whose connections its DialCtxFn opens to target (as a dialer
// through a tunnel, an SNI proxy or a unix socket does).
func dialedClient(t *testing.T, addr, target string) rueidis.Client {
	t.Helper()
	rc, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress:  []string{addr},
		DisableCache: true,
		DialCtxFn: func(ctx context.Context, _ string, d *net.Dialer, _ *tls.Config) (net.Conn, error) {
			return d.DialContext(ctx, "tcp", target)
		},
	})
	if err != nil {
		t.Fatalf("rueidis client for %s through %s: %v", addr, target, err)
	}
	t.Cleanup(rc.Close)
	return rc
}

// TestRedLockNodesOneAddressStringTwoServers: Clients whose rueidis clients
// name one address but dial two servers (a DialCtxFn per node: a tunnel,
// an SNI proxy) reach independent servers, with run_ids of their own. The
// RedLock is taken; it was refused with ErrInvalidArgument as nodes
// reaching one server, on the address alone.
func TestRedLockNodesOneAddressStringTwoServers(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	prefix := sharedPrefix(t)
	const addr = "redis.internal:6379"
	cs := []*Client{
		newTestClient(t, dialedClient(t, addr, nodes[0].Addr), prefix),
		newTestClient(t, dialedClient(t, addr, nodes[1].Addr), prefix),
		newTestClient(t, nodes[2].Client(t), prefix),
	}
	r := mustRedLock(t, "one-address", cs, roomyNodeTimeout) // two nodes late would fail the TryLock it checks
	lctx, err := r.TryLock(testCtx(t, 10*time.Second), 0)
	if err != nil {
		t.Fatalf("TryLock over three servers, two named by one address: %v", err)
	}
	if err := r.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
}
