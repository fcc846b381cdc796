package scriptlock

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// heldRepeatRig is a guarded Client behind a proxy with a Mutex held under
// a lease of a minute (its scripts loaded), whose next guarded Extend with
// lease short is held back in the proxy and has its connection cut under
// it: the Extend is made again on another connection, while the first
// attempt still reaches the server at the proxy's Thaw.
func heldRepeatRig(t *testing.T, name string, short time.Duration) (px *netproxy.Proxy, primary *redistest.Node, m *Mutex, lctx context.Context, extended chan error) {
	t.Helper()
	primary, _ = redistest.Replicated(t)
	px = netproxy.New(t, primary.Addr)
	c := newTestClient(t, px.Client(t), WithFailoverGuard(true, 2*time.Second))
	c.guardStall = 3 * time.Second
	return heldExtend(t, px, primary, c, name, short)
}

// heldExtend is heldRepeatRig's Extend on c, a Client behind px.
func heldExtend(t *testing.T, px *netproxy.Proxy, primary *redistest.Node, c *Client, name string, short time.Duration) (_ *netproxy.Proxy, _ *redistest.Node, m *Mutex, lctx context.Context, extended chan error) {
	t.Helper()
	ctx := testCtx(t, 60*time.Second)
	m = mustMutex(t, c, name, WithLease(time.Minute))
	lctx, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Extend(ctx, lctx, time.Minute); err != nil { // scripts loaded
		t.Fatal(err)
	}
	px.HoldOn("\r\n" + strconv.FormatInt(short.Milliseconds(), 10) + "\r\n")
	extended = make(chan error, 1)
	go func() { extended <- m.Extend(ctx, lctx, short) }()
	for deadline := time.Now().Add(5 * time.Second); !px.HeldOn(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the Extend never reached the proxy")
		}
	}
	return px, primary, m, lctx, extended
}

// TestGuardedExtendRepeatedLateFirst: a guarded Extend whose connection
// broke under it is made again on another connection, and succeeds; the
// first attempt was of unknown outcome, and reaches the server later still,
// after a later Extend with a longer lease ran. That later Extend must not
// move the hold's loss deadline past the shorter lease the first attempt
// then sets: the lock context ends no later than the server's expiry.
func TestGuardedExtendRepeatedLateFirst(t *testing.T) {
	t.Parallel()
	short := 4321 * time.Millisecond
	px, primary, m, lctx, extended := heldRepeatRig(t, "extend-repeat-late", short)
	ctx := testCtx(t, 60*time.Second)
	px.CutHeld()
	if err := <-extended; err != nil {
		t.Fatalf("Extend made again on another connection: %v", err)
	}
	if err := m.Extend(ctx, lctx, time.Minute); err != nil {
		t.Fatalf("later Extend: %v", err)
	}
	key, err := lockKey(m.c.cfg.prefix, "extend-repeat-late")
	if err != nil {
		t.Fatal(err)
	}
	awaitLossBy(t, lctx, lateShortLease(ctx, t, px, primary.Client(t), key, lctx, short, "Extend"))
}

// TestExtendRepeatedLateFirstUnguarded is TestGuardedExtendRepeatedLateFirst
// without the failover guard: Extend makes the call again itself.
func TestExtendRepeatedLateFirstUnguarded(t *testing.T) {
	t.Parallel()
	short := 4321 * time.Millisecond
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	_, _, m, lctx, extended := heldExtend(t, px, node, newTestClient(t, px.Client(t)), "extend-repeat-late-unguarded", short)
	ctx := testCtx(t, 60*time.Second)
	px.CutHeld()
	if err := <-extended; err != nil {
		t.Fatalf("Extend made again on another connection: %v", err)
	}
	if err := m.Extend(ctx, lctx, time.Minute); err != nil {
		t.Fatalf("later Extend: %v", err)
	}
	key, err := lockKey(m.c.cfg.prefix, "extend-repeat-late-unguarded")
	if err != nil {
		t.Fatal(err)
	}
	awaitLossBy(t, lctx, lateShortLease(ctx, t, px, node.Client(t), key, lctx, short, "Extend"))
}

// TestGuardedExtendNoRepeatAfterEnd: a guarded Extend whose connection
// breaks under it after its hold was released is not sent again: the hold
// is over, and its lock is nobody's to extend.
func TestGuardedExtendNoRepeatAfterEnd(t *testing.T) {
	t.Parallel()
	px, primary, m, lctx, extended := heldRepeatRig(t, "extend-repeat-ended", 4321*time.Millisecond)
	if err := m.Unlock(lctx); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	before := evalshaCalls(t, primary)
	px.CutHeld()
	err := <-extended
	if after := evalshaCalls(t, primary); after != before {
		t.Fatalf("Extend (%v) sent its script again after the hold was released (%d scripts run)", err, after-before)
	}
	if err == nil {
		t.Fatal("Extend whose connection broke after the hold was released succeeded")
	}
}

// evalshaCalls is how many EVALSHA calls node has run.
func evalshaCalls(t *testing.T, node *redistest.Node) int {
	t.Helper()
	info, err := node.Do(t, "INFO", "commandstats").ToString()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_evalsha:calls="); ok {
			n, err := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	return 0
}

// TestGuardedExtendEndedUnderBrokenCallNotHeld: a guarded Extend whose hold
// is released while it is in flight, and whose connection then breaks
// under it, is not made again and fails as any Extend whose hold ended
// while it was in flight does: with ErrNotHeld, not with the broken
// connection alone.
func TestGuardedExtendEndedUnderBrokenCallNotHeld(t *testing.T) {
	t.Parallel()
	px, _, m, lctx, extended := heldRepeatRig(t, "extend-repeat-ended-error", 4321*time.Millisecond)
	if err := m.Unlock(lctx); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	px.CutHeld()
	if err := <-extended; !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Extend whose hold was released while it was in flight: %v, want ErrNotHeld", err)
	}
}
