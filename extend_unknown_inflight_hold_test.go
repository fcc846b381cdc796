package scriptlock

import (
	"context"
	"io"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// heldBack is a rueidis client that keeps back the first script call
// carrying arg: it reports the call (trapped), waits until release, and
// fails it as a broken connection without sending it; the test sends it
// to the server later, as the late landing of a call whose connection
// broke after it was written.
type heldBack struct {
	rueidis.Client
	arg     string
	armed   atomic.Bool
	trapped chan rueidis.Completed
	release chan struct{}
}

func (c *heldBack) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	if cs := cmd.Commands(); len(cs) > 0 && (cs[0] == "EVALSHA" || cs[0] == "EVAL") && slices.Contains(cs, c.arg) && c.armed.CompareAndSwap(true, false) {
		c.trapped <- cmd
		<-c.release
		return rueidis.NewErrorResult(io.EOF)
	}
	return c.Client.Do(ctx, cmd)
}

func (c *heldBack) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	if len(cmds) == 1 {
		if cs := cmds[0].Commands(); len(cs) > 0 && cs[0] == "EVALSHA" && slices.Contains(cs, c.arg) && c.armed.CompareAndSwap(true, false) {
			c.trapped <- cmds[0]
			<-c.release
			return []rueidis.RedisResult{rueidis.NewErrorResult(io.EOF)}
		}
	}
	return c.Client.DoMulti(ctx, cmds...)
}

// TestReadExtendUnknownBoundsHoldRegisteredInFlight: an Extend of a read
// hold whose owner is its own (its script names the owner, not the hold)
// is in flight when the hold is released and its owner, read from its lock
// context, read-locks again without a lease (the watchdog renews that
// hold); the Extend then fails without an answer. Its script may still
// land on the new hold after a renewal, and set its shorter lease there:
// the new hold, registered before the outcome was known, counts with it
// too. Its loss deadline moved on with the watchdog's lease, and the lock
// context outlived the read lease the server had.
func TestReadExtendUnknownBoundsHoldRegisteredInFlight(t *testing.T) {
	t.Parallel()
	const name = "read-extend-unknown-inflight"
	short := 3210 * time.Millisecond
	node := redistest.Server(t)
	rc := &heldBack{Client: node.Client(t), arg: strconv.FormatInt(short.Milliseconds(), 10), trapped: make(chan rueidis.Completed, 1), release: make(chan struct{})}
	c := newTestClient(t, rc, WithWatchdog(9*time.Second, 500*time.Millisecond))
	ctx := testCtx(t, 60*time.Second)
	leased := mustRW(t, c, name, WithLease(time.Minute))
	renewed := mustRW(t, c, name)
	lctx, err := leased.RLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := leased.RExtend(ctx, lctx, time.Minute); err != nil { // scripts loaded
		t.Fatal(err)
	}
	rc.armed.Store(true)
	extended := make(chan error, 1)
	go func() { extended <- leased.RExtend(ctx, lctx, short) }()
	var late rueidis.Completed
	select {
	case late = <-rc.trapped:
	case <-time.After(5 * time.Second):
		t.Fatal("the Extend was never sent")
	}
	if err := leased.RUnlock(lctx); err != nil {
		t.Fatalf("RUnlock: %v", err)
	}
	owner, _ := OwnerFrom(lctx)
	next, err := renewed.RLock(WithOwner(ctx, owner))
	if err != nil {
		t.Fatal(err)
	}
	close(rc.release)
	if err := <-extended; err == nil {
		t.Fatal("Extend that never got an answer succeeded")
	}
	// A renewal of the new hold moves its deadline on.
	before := c.wd.renewals.Load()
	if !eventually(10*time.Second, func() bool { return c.wd.renewals.Load() > before }) {
		t.Fatal("the new hold was not renewed")
	}
	// The Extend's script lands now: the server's lease is short from
	// then on (until a renewal), which the deadline must not outlive.
	lossAt := monoTime(next.Value(lockCtxKey{}).(*lockCtx).hold.lossAt.Load())
	sent := time.Now()
	direct := node.Client(t)
	if held, err := direct.Do(ctx, late).AsInt64(); err != nil || held != 1 {
		t.Fatalf("late Extend: %d, %v: it did not reach the new hold", held, err)
	}
	if expiry := sent.Add(short); !lossAt.Before(expiry) {
		t.Fatalf("loss deadline %s after the server's expiry (lease %s set by the late Extend): the hold outlives the lock", lossAt.Sub(expiry), short)
	}
}

// TestLeanRenewalUnknownBoundsHoldRegisteredInFlight: as above, for a
// watchdog renewal of an unfenced LeanMutex hold whose owner is its own: in
// flight when the hold is released and its owner locks again with a longer
// lease, it then fails without an answer. The new hold, registered while
// it was in flight, is extended: its script may still land after that
// Extend and set the watchdog's lease, which the deadline must not
// outlive. It moved on to the Extend's lease.
func TestLeanRenewalUnknownBoundsHoldRegisteredInFlight(t *testing.T) {
	t.Parallel()
	const name = "lean-renewal-unknown-inflight"
	wdLease := 4321 * time.Millisecond
	node := redistest.Server(t)
	rc := &heldBack{Client: node.Client(t), arg: strconv.FormatInt(wdLease.Milliseconds(), 10), trapped: make(chan rueidis.Completed, 1), release: make(chan struct{})}
	c := newTestClient(t, rc, WithWatchdog(wdLease, 300*time.Millisecond))
	ctx := testCtx(t, 60*time.Second)
	l := mustLean(t, c, name)
	lctx, err := l.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rc.armed.Store(true)
	var late rueidis.Completed
	select {
	case late = <-rc.trapped:
	case <-time.After(5 * time.Second):
		t.Fatal("no renewal was sent")
	}
	if err := l.Unlock(lctx); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	owner, _ := OwnerFrom(lctx)
	next, err := l.LockWithLease(WithOwner(ctx, owner), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	close(rc.release)
	h := next.Value(lockCtxKey{}).(*lockCtx).hold
	if !eventually(5*time.Second, func() bool {
		c.wd.mu.Lock()
		defer c.wd.mu.Unlock()
		return c.wd.orphaned.Load() == 0
	}) {
		t.Fatal("the renewal's round never ended")
	}
	if err := l.Extend(ctx, next, time.Minute); err != nil {
		t.Fatal(err)
	}
	// The renewal's script lands now.
	lossAt := monoTime(h.lossAt.Load())
	sent := time.Now()
	direct := node.Client(t)
	if held, err := direct.Do(ctx, late).AsInt64(); err != nil || held != 1 {
		t.Fatalf("late renewal: %d, %v: it did not reach the new hold", held, err)
	}
	if expiry := sent.Add(wdLease); !lossAt.Before(expiry) {
		t.Fatalf("loss deadline %s after the server's expiry (lease %s set by the late renewal): the hold outlives the lock", lossAt.Sub(expiry), wdLease)
	}
}
