package scriptlock

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// unsentRig is a Client whose rueidis connection runs through a proxy that
// can lose a call's reply with its connection while every dial fails: a
// retryable script rueidis then makes again is never sent again, and the
// call fails with that dial's error although its first attempt ran.
type unsentRig struct {
	node   *redistest.Node
	px     *netproxy.Proxy
	refuse *atomic.Bool
	c      *Client
}

func newUnsentRig(t *testing.T, opts ...Option) *unsentRig {
	t.Helper()
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	rc, refuse := dialRefusingClient(t, px.Addr)
	return &unsentRig{node: node, px: px, refuse: refuse, c: newTestClient(t, rc, opts...)}
}

// lose runs call with the server's replies held back, from once its record
// is reserved (reserved: a call made through reservedCall) or at once, waits
// until landed sees its change on the server, then drops the connection
// with every dial failing, so that the reply is lost and rueidis's repeat
// never sent. It returns call's error, having checked that the change
// landed, that the error says the outcome is unknown, and that errors.As
// still finds the dial's *net.OpError.
func (r *unsentRig) lose(t *testing.T, reserved bool, landed func() bool, call func() error) error {
	t.Helper()
	if reserved {
		r.c.testReserved = r.px.FreezeReplies
	} else {
		r.px.FreezeReplies()
	}
	res := make(chan error, 1)
	go func() { res <- call() }()
	ok := eventually(landWait, landed)
	r.refuse.Store(true)
	r.px.DropAll() // the reply is lost with its connection; every repeat's dial fails
	r.px.Thaw()
	err := <-res
	r.c.testReserved = nil // once the call returned: no hook runs beside this
	r.refuse.Store(false)
	if !ok {
		t.Fatalf("the call did not reach the server (error %v)", err)
	}
	if !errors.Is(err, ErrOutcomeUnknown) || !strings.Contains(err.Error(), "outcome unknown") {
		t.Fatalf("call whose reply was lost, its repeats never sent = %v; want an error of unknown outcome (errors.Is ErrOutcomeUnknown)", err)
	}
	var oe *net.OpError
	if !errors.As(err, &oe) {
		t.Fatalf("call = %v; want the dial's *net.OpError through errors.As", err)
	}
	return err
}

// landWait is how long lose waits for the call to land on the server, and
// callBound how long the call's context lives (boundedCtx): a call that
// landed late on a loaded machine still has its connection dropped, and
// rueidis's repeat refused a dial, well before its context ends.
const (
	landWait  = 3 * time.Second
	callBound = landWait + 3*time.Second
)

// boundedCtx is ctx ended after callBound: a call whose repeats keep failing
// to dial ends then, with the dial's error.
func boundedCtx(t *testing.T, ctx context.Context) context.Context {
	ctx, cancel := context.WithTimeout(ctx, callBound)
	t.Cleanup(cancel)
	return ctx
}
