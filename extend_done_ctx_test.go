package scriptlock

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestExtendEndedContextBoundsNothing: an Extend called with a context that
// has already ended sends nothing (rueidis refuses it before writing), so
// no script of it can run later: it must not bound the hold's later
// deadlines by its lease, as an Extend of unknown outcome does. Else one
// short Extend made with a stale context ended the hold, extended since
// with a long lease, within that short lease.
func TestExtendEndedContextBoundsNothing(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	m := mustMutex(t, c, "extend-done-ctx")
	ctx := testCtx(t, 30*time.Second)
	lctx, err := m.LockWithLease(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if err := m.Extend(done, lctx, 2*time.Second); err == nil {
		t.Fatal("Extend with an ended context succeeded")
	}
	if err := m.Extend(ctx, lctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	h := lctx.Value(lockCtxKey{}).(*lockCtx).hold
	if left := time.Until(monoTime(h.lossAt.Load())); left < 30*time.Second {
		t.Fatalf("loss deadline %s away after a one-minute Extend: an Extend that sent nothing still bounds the hold", left.Round(time.Millisecond))
	}
}

// cancelOnBusy is a rueidis client that ends a context once a script call
// carrying arg has been answered BUSY twice: the answer is back, so nothing
// of the call is in flight when the context ends.
type cancelOnBusy struct {
	rueidis.Client
	arg    string
	busy   atomic.Int32
	cancel atomic.Pointer[context.CancelFunc]
}

// ours reports whether cmd is a script call carrying arg. It is read before
// the call: rueidis reuses the command's memory once the call is answered.
func (c *cancelOnBusy) ours(cmd rueidis.Completed) bool {
	cs := cmd.Commands()
	return len(cs) > 0 && (cs[0] == "EVALSHA" || cs[0] == "EVAL") && slices.Contains(cs, c.arg)
}

func (c *cancelOnBusy) seen(ours bool, err error) {
	if ours && err != nil && strings.HasPrefix(err.Error(), "BUSY ") && c.busy.Add(1) == 2 {
		if cancel := c.cancel.Load(); cancel != nil {
			(*cancel)()
		}
	}
}

func (c *cancelOnBusy) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	ours := c.ours(cmd)
	r := c.Client.Do(ctx, cmd)
	c.seen(ours, r.Error())
	return r
}

func (c *cancelOnBusy) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	ours := make([]bool, len(cmds))
	for i, cmd := range cmds {
		ours[i] = c.ours(cmd)
	}
	rs := c.Client.DoMulti(ctx, cmds...)
	for i, r := range rs {
		c.seen(ours[i], r.Error())
	}
	return rs
}

// TestExtendRefusedUntilContextEndBoundsNothing: an Extend Redis refused
// having run nothing (BUSY: the server ran someone's long script) until its
// context ended ran nothing, nor can it run later: it must not bound the
// hold's later deadlines by its lease. The context ends right after a BUSY
// answer, so that no attempt is in flight then (one that is, BUSY cleared,
// may run, and bounds the hold rightly): a context ending at a set time
// caught an attempt in flight on a loaded machine.
func TestExtendRefusedUntilContextEndBoundsNothing(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := &cancelOnBusy{Client: node.Client(t), arg: "2000"}
	c := newTestClient(t, rc)
	ctx := testCtx(t, 60*time.Second)
	if err := node.Do(t, "CONFIG", "SET", "busy-reply-threshold", "50").Error(); err != nil {
		t.Fatal(err)
	}
	m := mustMutex(t, c, "extend-busy")
	lctx, err := m.LockWithLease(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Extend(ctx, lctx, time.Minute); err != nil { // script loaded
		t.Fatal(err)
	}
	script := slowScript(t, node, 1500*time.Millisecond)
	awaitBusy(t, ctx, rc)
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rc.cancel.Store(&cancel)
	busyErr := m.Extend(bctx, lctx, 2*time.Second)
	if busyErr == nil {
		t.Fatal("Extend while the server is busy succeeded")
	}
	if n := rc.busy.Load(); n != 2 || bctx.Err() == nil {
		t.Fatalf("Extend ended after %d BUSY answers, its context ended: %v (%v); want it ended by the test after the second", n, bctx.Err() != nil, busyErr)
	}
	script()
	if err := m.Extend(ctx, lctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	h := lctx.Value(lockCtxKey{}).(*lockCtx).hold
	if left := time.Until(monoTime(h.lossAt.Load())); left < 30*time.Second {
		t.Fatalf("loss deadline %s away after a one-minute Extend: an Extend refused BUSY until its context ended (%v) still bounds the hold", left.Round(time.Millisecond), busyErr)
	}
}
