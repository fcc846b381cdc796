package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRedLockExtendAbandonedValidity: a RedLock Extend whose node calls are
// cut off by the node timeout on a majority of nodes may still run there
// later. A later Extend with a longer lease, answered by every node, must
// not move the validity past the shorter lease those late scripts set, less
// the RedLock's own drift allowance (wider here than a node's loss margin,
// which alone ends the nodes' holds too late).
func TestRedLockExtendAbandonedValidity(t *testing.T) {
	t.Parallel()
	prefix := sharedPrefix(t)
	nodes := redistest.Servers(t, 3)
	cs := make([]*Client, 3)
	pxs := make([]*netproxy.Proxy, 3)
	rcs := make([]rueidis.Client, 3)
	for i, node := range nodes {
		pxs[i] = netproxy.New(t, node.Addr)
		rc := droppingClient(t, pxs[i].Addr)
		rcs[i] = rc
		cs[i] = newTestClient(t, rc, prefix)
	}
	const drift = 0.1
	r := mustRedLock(t, "extend-abandoned", cs, WithLease(time.Minute), WithClockDrift(drift, 0), WithNodeTimeout(time.Second))
	ctx := testCtx(t, 60*time.Second)
	lctx := lockEveryNode(t, ctx, r) // nodes 0 and 1 are the majority cut off
	// Scripts loaded.
	if err := r.Extend(ctx, lctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	// The short Extend is written on the connections to two nodes open
	// now, which are held up, and let go at the node timeout.
	pxs[0].HoldOpen()
	pxs[1].HoldOpen()
	// The short lease must outlast rueidis's reconnection below (about 3 s
	// here: the held connections are dropped at the 1 s write timeout),
	// or the RedLock's validity, bounded by it, ends before the next Extend
	// on a loaded machine.
	short := 10 * time.Second
	if err := r.Extend(ctx, lctx, short); err == nil {
		t.Fatal("Extend with a majority of nodes held up succeeded")
	}
	// rueidis drops the held connections and dials new ones, which flow.
	for _, rc := range rcs[:2] {
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			err := rc.Do(pctx, rc.B().Ping().Build()).Error()
			cancel()
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no new connection: %v", err)
			}
		}
	}
	if err := r.Extend(ctx, lctx, time.Minute); err != nil {
		t.Fatalf("Extend on new connections: %v", err)
	}
	// The abandoned node calls reach their servers last.
	pxs[0].Thaw()
	pxs[1].Thaw()
	var expiry time.Time
	for i, node := range nodes[:2] {
		direct := node.Client(t)
		key := r.nodes[i].key
		var (
			pttl int64
			err  error
		)
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			pttl, err = direct.Do(ctx, direct.B().Pttl().Key(key).Build()).AsInt64()
			if err != nil {
				t.Fatal(err)
			}
			if pttl <= short.Milliseconds() || time.Now().After(deadline) {
				break
			}
		}
		if pttl > short.Milliseconds() {
			t.Fatalf("the abandoned Extend never ran on node %d once let through (PTTL %d ms)", i, pttl)
		}
		if at := time.Now().Add(time.Duration(pttl) * time.Millisecond); expiry.IsZero() || at.After(expiry) {
			expiry = at // the later of the two: the majority's lease ends then
		}
	}
	h := lctx.Value(r.id).(*redHeld)
	valid := monoTime(h.validUntil.Load())
	if bound := expiry.Add(-r.drift(short)); !valid.Before(bound) {
		t.Fatalf("validity %s after the majority's expiry less the drift allowance (%s): the RedLock outlives the lock", valid.Sub(bound), r.drift(short))
	}
	select {
	case <-lctx.Done():
	case <-time.After(time.Until(expiry) + 2*time.Second):
		t.Fatalf("lock context still live %s after the majority's expiry", time.Since(expiry))
	}
}
