package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestGuardedExtendAbandonedLeaseMark: a guarded Extend let go at its
// context's end may still reach the server: its request is written on a
// pooled connection the server has not read yet. A later Extend goes out on
// another pooled connection and may run first; the abandoned one, with a
// shorter lease, then runs last. The later Extend must not move the hold's
// loss deadline past the lease the abandoned one may still set: the lock
// context ends no later than the server's expiry.
func TestGuardedExtendAbandonedLeaseMark(t *testing.T) {
	t.Parallel()
	px, c, direct, ctx := guardedAbandonRig(t)
	m := mustMutex(t, c, "extend-abandoned", WithLease(time.Minute))
	key, err := lockKey(c.cfg.prefix, "extend-abandoned")
	if err != nil {
		t.Fatal(err)
	}
	lctx, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Scripts loaded, a pooled connection open for the blocking calls.
	if err := m.Extend(ctx, lctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	// The connections open now hold back what is written on them; new ones
	// flow. The short Extend goes out on the pooled one and is let go.
	px.HoldOpen()
	short := 4 * time.Second
	letGoExtend(t, ctx, m, lctx, short)
	// A longer Extend goes out on a new pooled connection and runs now.
	if err := m.Extend(ctx, lctx, time.Minute); err != nil {
		t.Fatalf("Extend on a new connection: %v", err)
	}
	// The abandoned Extend reaches the server last.
	awaitLossBy(t, lctx, lateShortLease(ctx, t, px, direct, key, lctx, short, "Extend"))
}

// TestExtendAbandonedLeaseMarkUnguarded: an Extend without the failover
// guard whose context ends once its request is written is let go by
// rueidis, and its script still runs when the server reads it. The
// connection it was written on is held up; rueidis drops it as dead and
// a later Extend, with a longer lease, goes out on a new one and runs
// first. The later Extend must not move the hold's loss deadline past the
// shorter lease the first one sets when it runs last.
func TestExtendAbandonedLeaseMarkUnguarded(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	rc := droppingClient(t, px.Addr)
	c := newTestClient(t, rc)
	direct := node.Client(t)
	ctx := testCtx(t, 60*time.Second)
	m := mustMutex(t, c, "extend-abandoned-unguarded", WithLease(time.Minute))
	key, err := lockKey(c.cfg.prefix, "extend-abandoned-unguarded")
	if err != nil {
		t.Fatal(err)
	}
	lctx, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Scripts loaded.
	if err := m.Extend(ctx, lctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	// The short Extend is written on the connection open now, which is
	// held up, and let go at its context's end.
	px.HoldOpen()
	short := 4 * time.Second
	letGoExtend(t, ctx, m, lctx, short)
	// rueidis drops the held connection and dials a new one, which flows.
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
	if err := m.Extend(ctx, lctx, time.Minute); err != nil {
		t.Fatalf("Extend on a new connection: %v", err)
	}
	// The abandoned Extend reaches the server last.
	awaitLossBy(t, lctx, lateShortLease(ctx, t, px, direct, key, lctx, short, "Extend"))
}

// TestGuardedExtendAbandonedWatchdogHandOver: after a guarded Extend of
// unknown outcome, a re-entry without a lease hands the hold to the
// watchdog, whose renewals set its longer lease. Neither the re-entry nor a
// renewal, run before the abandoned Extend, may move the hold's loss
// deadline past the shorter lease that Extend sets when it runs last.
func TestGuardedExtendAbandonedWatchdogHandOver(t *testing.T) {
	t.Parallel()
	px, c, direct, ctx := guardedAbandonRig(t)
	m := mustMutex(t, c, "extend-abandoned-watchdog")
	key, err := lockKey(c.cfg.prefix, "extend-abandoned-watchdog")
	if err != nil {
		t.Fatal(err)
	}
	lctx, err := m.LockWithLease(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Extend(ctx, lctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	px.HoldOpen()
	short := 4 * time.Second
	letGoExtend(t, ctx, m, lctx, short)
	// The re-entry, and the renewal it has made at once, go out on new
	// connections and run now.
	if _, err := m.Lock(lctx); err != nil {
		t.Fatalf("re-entry without a lease: %v", err)
	}
	time.Sleep(500 * time.Millisecond)
	lateShortLease(ctx, t, px, direct, key, lctx, short, "Extend")
}

// guardedAbandonRig is a Client under the failover guard (WAIT's timeout
// 2 s) reaching a primary with a replica through px, whose calls let go
// keep their connection WAIT's timeout and guardStall (3 s) more, and a
// client of that primary that reaches it directly; ctx ends in 60 s.
func guardedAbandonRig(t *testing.T) (px *netproxy.Proxy, c *Client, direct rueidis.Client, ctx context.Context) {
	t.Helper()
	primary, _ := redistest.Replicated(t)
	px = netproxy.New(t, primary.Addr)
	c = newTestClient(t, px.Client(t), WithFailoverGuard(true, 2*time.Second))
	c.guardStall = 3 * time.Second
	return px, c, primary.Client(t), testCtx(t, 60*time.Second)
}

// letGoExtend makes an Extend of lctx to short whose context ends after
// 100 ms, on a connection held up: it is let go, of unknown outcome.
func letGoExtend(t *testing.T, ctx context.Context, m *Mutex, lctx context.Context, short time.Duration) {
	t.Helper()
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	err := m.Extend(cctx, lctx, short)
	cancel()
	if err == nil {
		t.Fatal("Extend on a held connection succeeded")
	}
}

// lateShortLease lets the held call of unknown outcome (what: "Extend",
// "re-entry") that set short reach the server last, through px, and fails
// the test when the hold's loss deadline is not before the lock's expiry
// there, read with direct; it returns that expiry.
func lateShortLease(ctx context.Context, t *testing.T, px *netproxy.Proxy, direct rueidis.Client, key string, lctx context.Context, short time.Duration, what string) time.Time {
	t.Helper()
	px.Thaw()
	var pttl int64
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var err error
		pttl, err = direct.Do(ctx, direct.B().Pttl().Key(key).Build()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		if pttl <= short.Milliseconds() || time.Now().After(deadline) {
			break
		}
	}
	replied := time.Now()
	if pttl > short.Milliseconds() {
		t.Fatalf("the abandoned %s never ran on the server once let through (PTTL %d ms)", what, pttl)
	}
	expiry := replied.Add(time.Duration(pttl) * time.Millisecond)
	lossAt := monoTime(lctx.Value(lockCtxKey{}).(*lockCtx).hold.lossAt.Load())
	if !lossAt.Before(expiry) {
		t.Fatalf("loss deadline %s after the server's expiry (PTTL %d ms): the hold outlives the lock", lossAt.Sub(expiry), pttl)
	}
	return expiry
}

// awaitLossBy fails the test unless lctx ends within 2 s of expiry.
func awaitLossBy(t *testing.T, lctx context.Context, expiry time.Time) {
	t.Helper()
	select {
	case <-lctx.Done():
	case <-time.After(time.Until(expiry) + 2*time.Second):
		t.Fatalf("lock context still live %s after the server's expiry", time.Since(expiry))
	}
}
