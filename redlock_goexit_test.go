package scriptlock

import (
	"context"
	"io"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRedLockUnlockNodeGoexit: a RedLock node's release that a client
// wrapper ends with runtime.Goexit has the Goexit go on on Unlock's
// caller's goroutine once the other nodes are released, and the node is
// kept for an Unlock again: not a node taken for one released.
func TestRedLockUnlockNodeGoexit(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	rc := newPanickyClient(nodes[1].Client(t), scriptNaming("job", "Do", "DoMulti"))
	rc.goexit.Store(true)
	cs := redlockClientsThrough(t, nodes, 1, rc)
	ctx := testCtx(t, 20*time.Second)
	r := mustRedLock(t, "job", cs, WithNodeTimeout(time.Second))
	lctx, err := r.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rc.left.Store(-1)
	if how := howEnded(func() { err = r.Unlock(lctx) }); how != endedGoexit {
		t.Fatalf("Unlock whose node's release ended its goroutine %s (%v); want its Goexit to go on on the caller's goroutine", how, err)
	}
	rc.left.Store(0)
	if h := heldOn(t, r, nodes, 0, 1, 2); h[0] || !h[1] || h[2] {
		t.Fatalf("nodes held after the Unlock: %v; want node 1 alone", h)
	}
	if err := r.Unlock(lctx); err != nil {
		t.Fatalf("Unlock again: %v; want node 1 released", err)
	}
	if h := heldOn(t, r, nodes, 0, 1, 2); h[0] || h[1] || h[2] {
		t.Fatalf("nodes held after Unlock again: %v", h)
	}
}

// TestRedLockRunIDGoexit: a client wrapper that ends the goroutine of a
// node's INFO server (the check that the nodes are distinct servers) has
// the Goexit go on on Lock's caller's goroutine, the grants given back:
// not a node taken for one that did not answer.
func TestRedLockRunIDGoexit(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	rc := newPanickyNodes(nodes[1].Client(t), func(c wrapperCall) bool {
		return c.method == "Do" && len(c.args) > 0 && c.args[0] == "INFO"
	})
	rc.goexit.Store(true)
	rc.left.Store(-1)
	cs := redlockClientsThrough(t, nodes, 1, rc)
	ctx := testCtx(t, 20*time.Second)
	r := mustRedLock(t, "job", cs, WithNodeTimeout(time.Second))
	var err error
	if how := howEnded(func() { _, err = r.Lock(ctx) }); how != endedGoexit {
		t.Fatalf("Lock whose node's INFO ended its goroutine %s (%v); want its Goexit to go on on the caller's goroutine", how, err)
	}
	if !eventually(3*time.Second, func() bool {
		h := heldOn(t, r, nodes, 0, 1, 2)
		return !h[0] && !h[1] && !h[2]
	}) {
		t.Fatalf("nodes held after Lock ended: %v", heldOn(t, r, nodes, 0, 1, 2))
	}
}

// infoThenGoexit is rc with a first INFO server that fails at once with no
// answer (a connection cut), and later ones that end the call's goroutine
// (runtime.Goexit), as a wrapper's t.FailNow does. asks counts them.
func infoThenGoexit(rc rueidis.Client, asks *atomic.Int64) rueidis.Client {
	return onInfoServer{rc, func(context.Context, func() rueidis.RedisResult) rueidis.RedisResult {
		if asks.Add(1) > 1 {
			runtime.Goexit()
		}
		return rueidis.NewErrorResult(io.ErrUnexpectedEOF)
	}}
}

// TestRedLockRunIDAgainGoexit: a node whose run_id went unanswered at the
// check beside the attempt, asked again once it granted, whose INFO server
// a client wrapper then ends with runtime.Goexit, has the nodes' grants
// given back before the Goexit goes on on Lock's caller's goroutine, as at
// the first check. Asked again on the caller's own goroutine, the Goexit
// ended it at once: the grants were neither given back nor returned, held
// and renewed for nobody.
func TestRedLockRunIDAgainGoexit(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	var asks atomic.Int64
	cs := redlockClientsThrough(t, nodes, 1, infoThenGoexit(nodes[1].Client(t), &asks))
	ctx := testCtx(t, 20*time.Second)
	r := mustRedLock(t, "runid-again-goexit", cs, WithNodeTimeout(time.Second))
	var err error
	if how := howEnded(func() { _, err = r.TryLock(ctx, 0) }); how != endedGoexit {
		t.Fatalf("TryLock whose node's INFO asked again (asks %d) ended its goroutine %s (%v); want its Goexit to go on on the caller's goroutine", asks.Load(), how, err)
	}
	if n := asks.Load(); n != 2 {
		t.Fatalf("INFO server asked %d times; want the node asked again once", n)
	}
	if !eventually(3*time.Second, func() bool {
		h := heldOn(t, r, nodes, 0, 1, 2)
		return !h[0] && !h[1] && !h[2]
	}) {
		t.Fatalf("nodes held after TryLock ended: %v; want every grant given back", heldOn(t, r, nodes, 0, 1, 2))
	}
}
