package scriptlock

import (
	"context"
	"crypto/tls"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// frozenMargin is how long past its context's end (or a RedLock's node
// timeout) a call against a frozen server may return on a loaded machine.
const frozenMargin = 700 * time.Millisecond

// countedDial counts the connections a rueidis client opens.
type countedDial struct{ n atomic.Int32 }

func (d *countedDial) dial(ctx context.Context, addr string, nd *net.Dialer, _ *tls.Config) (net.Conn, error) {
	d.n.Add(1)
	return nd.DialContext(ctx, "tcp", addr)
}

// TestGuardFrozenHonoursContext: a guarded call (the script and its WAIT) goes
// out on a pooled connection, and rueidis watches no cancellation there: it
// opens a new pooled connection under its dial timeout and the call's
// deadline (the handshake against a server that accepts connections but
// never answers, SIGSTOP), and waits for the reply on an open one until the
// call's deadline (the guard's stall bound at the latest). A guarded Lock,
// TryLock or Extend whose context was cancelled returned after rueidis's
// dial timeout (5 s), or at its stall bound: each must return by its
// context's end plus a margin, with the context's error, and a RedLock's
// frozen node must cost its node timeout. The cut-off attempt is one of
// unknown outcome: once the server answers again, the lock is free.
func TestGuardFrozenHonoursContext(t *testing.T) {
	primary, _ := redistest.Replicated(t)
	checker := newTestClient(t, primary.Client(t))
	for i, tc := range []struct {
		name   string
		fresh  bool // the pool keeps no idle connection: the call opens one
		cancel bool // the context is cancelled, else it has a deadline
		op     string
	}{
		{"TryLock/cancelled/new connection", true, true, "trylock"},
		{"TryLock/cancelled/pooled connection", false, true, "trylock"},
		{"TryLock/deadline/new connection", true, false, "trylock"},
		{"Lock/cancelled/new connection", true, true, "lock"},
		{"Extend/cancelled/pooled connection", false, true, "extend"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d countedDial
			rc := primary.Client(t, func(o *rueidis.ClientOption) {
				o.DialCtxFn = d.dial
				if tc.fresh {
					o.BlockingPoolCleanup = 50 * time.Millisecond
				}
			})
			c := newTestClient(t, rc, WithKeyPrefix(checker.cfg.prefix), loadedGuard())
			m := mustMutex(t, c, "frozen-"+tc.op+"-"+strconv.Itoa(i))
			ctx := testCtx(t, 30*time.Second)
			// The replica count taken, and (extend) a hold to extend.
			l, err := m.LockWithLease(ctx, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if tc.op != "extend" {
				if err := m.Unlock(l); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(300 * time.Millisecond) // the idle pooled connection closed (fresh)
			primary.Pause()
			defer primary.Resume()
			dials := d.n.Load()

			const after = 300 * time.Millisecond
			var cctx context.Context
			var cancel context.CancelFunc
			if tc.cancel {
				cctx, cancel = context.WithCancel(ctx)
				time.AfterFunc(after, cancel)
			} else {
				cctx, cancel = context.WithTimeout(ctx, after)
			}
			defer cancel()
			start := time.Now()
			switch tc.op {
			case "trylock":
				_, err = m.TryLock(cctx, 0)
			case "lock":
				_, err = m.Lock(cctx)
			case "extend":
				err = m.Extend(cctx, l, 20*time.Second)
			}
			took := time.Since(start)
			if err == nil {
				t.Fatalf("%s against a frozen server succeeded", tc.op)
			}
			if took > after+frozenMargin {
				t.Errorf("%s with a context ending after %v returned after %v: %v", tc.op, after, took.Round(time.Millisecond), err)
			}
			if tc.fresh && d.n.Load() == dials {
				t.Errorf("the call opened no new connection")
			}
			if tc.op == "extend" {
				return
			}
			// What the cut-off attempt may have granted is given back.
			primary.Resume()
			if !eventually(5*time.Second, func() bool {
				n, err := rc.Do(ctx, rc.B().Exists().Key(m.Key()).Build()).AsInt64()
				return err == nil && n == 0
			}) {
				t.Errorf("%s stays held after the server answers again", m.Key())
			}
		})
	}
}

// TestRedLockGuardedFrozenNode: a RedLock over three nodes, one of them a
// guarded primary frozen (SIGSTOP) with no idle pooled connection: the
// guarded attempt there opens a new one, whose handshake never ends.
// TryLock(ctx, 0) succeeds on the other two within the node timeout.
func TestRedLockGuardedFrozenNode(t *testing.T) {
	t.Parallel()
	primary, _ := redistest.Replicated(t)
	others := redistest.Servers(t, 2)
	prefix := sharedPrefix(t)
	var d countedDial
	cs := []*Client{newTestClient(t, primary.Client(t, func(o *rueidis.ClientOption) {
		o.DialCtxFn = d.dial
		o.BlockingPoolCleanup = 50 * time.Millisecond
	}), prefix)}
	for _, n := range others {
		cs = append(cs, newTestClient(t, n.Client(t), prefix))
	}
	const nodeTimeout = 200 * time.Millisecond
	r, err := NewRedLock("frozen-guarded-node", cs, WithNodeTimeout(nodeTimeout))
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t, 30*time.Second)
	// Every node's run_id known and the replica count taken: every node
	// granted (a primary that answered after the node timeout may have
	// neither, and the frozen attempt would then dial for them instead).
	l := lockEveryNode(t, ctx, r)
	redUnlock(t, r, l, r.HeldOn(l))
	time.Sleep(300 * time.Millisecond) // the idle pooled connection closed
	primary.Pause()
	defer primary.Resume()
	dials := d.n.Load()
	start := time.Now()
	l, err = r.TryLock(ctx, 0)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("TryLock with one node of three frozen: %v", err)
	}
	defer func() { _ = r.Unlock(l) }()
	if took > nodeTimeout+frozenMargin {
		t.Errorf("TryLock with one node of three frozen took %v, node timeout %v", took.Round(time.Millisecond), nodeTimeout)
	}
	if d.n.Load() == dials {
		t.Errorf("the frozen node's attempt opened no new connection")
	}
}
