package scriptlock

import (
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestReadExtendUnknownBoundsOwnersNextHold: the script of an Extend of a
// read hold whose owner is its own (not shared) names the owner, not the
// hold (such a hold carries no mark). One whose connection broke under it,
// made again and answered, may still run on the server later: after the
// hold was released and its owner, read from its lock context, read-locked
// again, it sets its shorter lease on the owner's new hold. That hold's
// loss deadline must not outlive it: the lock context outlived the read
// lease the server had.
func TestReadExtendUnknownBoundsOwnersNextHold(t *testing.T) {
	t.Parallel()
	const name = "read-extend-unknown-next"
	short := 4321 * time.Millisecond
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	c := newTestClient(t, px.Client(t))
	ctx := testCtx(t, 60*time.Second)
	rw := mustRW(t, c, name, WithLease(time.Minute))
	lctx, err := rw.RLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := rw.RExtend(ctx, lctx, time.Minute); err != nil { // scripts loaded
		t.Fatal(err)
	}
	px.HoldOn("\r\n" + strconv.FormatInt(short.Milliseconds(), 10) + "\r\n")
	extended := make(chan error, 1)
	go func() { extended <- rw.RExtend(ctx, lctx, short) }()
	for deadline := time.Now().Add(5 * time.Second); !px.HeldOn(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the Extend never reached the proxy")
		}
	}
	px.CutHeld()
	if err := <-extended; err != nil {
		t.Fatalf("Extend made again on another connection: %v", err)
	}
	if err := rw.RUnlock(lctx); err != nil {
		t.Fatalf("RUnlock: %v", err)
	}
	owner, _ := OwnerFrom(lctx)
	next, err := rw.RLock(WithOwner(ctx, owner))
	if err != nil {
		t.Fatal(err)
	}
	awaitLossBy(t, next, lateShortLease(ctx, t, px, node.Client(t), rw.Key(), next, short, "Extend"))
}

// TestLeanRenewalUnknownBoundsOwnersNextHold: as above, for a watchdog
// renewal of an unfenced LeanMutex hold whose owner is its own (it draws no
// token): one whose connection broke under it (made again and answered)
// may still run on the server after the hold was released and its owner
// locked again with a longer lease, and set the watchdog's lease there. The
// new hold's loss deadline must not outlive it: the lock context outlived
// the lease the server had.
func TestLeanRenewalUnknownBoundsOwnersNextHold(t *testing.T) {
	t.Parallel()
	const name = "lean-renewal-unknown-next"
	wdLease := 4321 * time.Millisecond
	node := redistest.Server(t)
	px := netproxy.New(t, node.Addr)
	c := newTestClient(t, px.Client(t), WithWatchdog(wdLease, time.Second))
	ctx := testCtx(t, 60*time.Second)
	l := mustLean(t, c, name)
	lctx, err := l.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	px.HoldOn("\r\n" + strconv.FormatInt(wdLease.Milliseconds(), 10) + "\r\n")
	for deadline := time.Now().Add(5 * time.Second); !px.HeldOn(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the renewal never reached the proxy")
		}
	}
	before := c.wd.renewals.Load()
	px.CutHeld()
	if !eventually(5*time.Second, func() bool { return c.wd.renewals.Load() > before }) {
		t.Fatal("the renewal made again was not confirmed")
	}
	if err := l.Unlock(lctx); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	owner, _ := OwnerFrom(lctx)
	next, err := l.LockWithLease(WithOwner(ctx, owner), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	awaitLossBy(t, next, lateShortLease(ctx, t, px, node.Client(t), l.Key(), next, wdLease, "renewal"))
}
