package scriptlock

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// infoBombClient is a rueidis client wrapper (a hook, a middleware) whose
// nodes panic on INFO server while armed.
type infoBombClient struct {
	rueidis.Client
	armed *atomic.Bool
}

func (c infoBombClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	if cs := cmd.Commands(); len(cs) == 2 && cs[0] == "INFO" && cs[1] == "server" && c.armed.Load() {
		panic("client wrapper panicked on INFO")
	}
	return c.Client.Do(ctx, cmd)
}

func (c infoBombClient) Nodes() map[string]rueidis.Client {
	out := map[string]rueidis.Client{}
	for addr, n := range c.Client.Nodes() {
		out[addr] = infoBombClient{n, c.armed}
	}
	return out
}

// TestRedLockCheckPanicReachesCaller: a node's client wrapper that panics
// on the INFO asking its server's run_id (the check that no two nodes reach
// one server, run alongside the first attempt) panics on Lock's caller, as
// a panic in a node's attempt does, and the nodes' grants are given back. It
// ran on a goroutine of the check, and crashed the process.
func TestRedLockCheckPanicReachesCaller(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	prefix := sharedPrefix(t)
	var armed atomic.Bool
	armed.Store(true)
	cs := []*Client{
		newTestClient(t, nodes[0].Client(t), prefix),
		newTestClient(t, infoBombClient{nodes[1].Client(t), &armed}, prefix),
		newTestClient(t, nodes[2].Client(t), prefix),
	}
	r := mustRedLock(t, "check-panic", cs, WithNodeTimeout(time.Second))
	ctx := testCtx(t, 20*time.Second)
	if p := panicked(func() { _, _ = r.TryLock(ctx, 0) }); p == nil {
		t.Fatal("TryLock did not panic")
	}
	if h := heldOn(t, r, nodes, 0, 1, 2); h[0] || h[1] || h[2] {
		t.Fatalf("nodes holding the lock after the check's panic: %v", h)
	}
	armed.Store(false)
	lctx, err := r.TryLock(ctx, 0)
	if err != nil {
		t.Fatalf("TryLock after the panic: %v", err)
	}
	if err := r.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
}
