package scriptlock

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"go.uber.org/goleak"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRandomFaults drives each primitive through Lock, TryLock and Unlock
// under a random schedule of network freezes, SIGSTOP of the server shorter
// and longer than the lease, and kill -9 + restart with AOF. After every step
// it checks:
//
//   - exclusion: a rival owner (another Client, straight to the server) never
//     gets the lock while the holder's context is live;
//   - loss before expiry: once the server no longer has the holder's hold,
//     the holder's context has ended (allowing the scheduler a moment);
//   - nothing stays held after Unlock, a failed Unlock or a failed
//     acquisition beyond the lease it may have set;
//   - Lock and TryLock return within their deadline (plus slack);
//   - no goroutine outlives Close.
//
// SCRIPTLOCK_FAULT_STEPS sets the number of steps (default 10) and
// SCRIPTLOCK_FAULT_SEED the seed (default: random, logged).
func TestRandomFaults(t *testing.T) {
	steps := 10
	if v, err := strconv.Atoi(os.Getenv("SCRIPTLOCK_FAULT_STEPS")); err == nil && v > 0 {
		steps = v
	}
	seed := rand.Uint64()
	if v, err := strconv.ParseUint(os.Getenv("SCRIPTLOCK_FAULT_SEED"), 10, 64); err == nil {
		seed = v
	}
	// The kinds run side by side, each on its own server and proxy, and
	// everything any of them started must be gone once all have closed.
	// The test itself is not parallel: no other test's goroutines come or
	// go meanwhile.
	before := goleak.IgnoreCurrent()
	t.Run("kinds", func(t *testing.T) {
		for _, lc := range lockCases {
			t.Run(lc.name, func(t *testing.T) {
				t.Parallel()
				t.Logf("seed %d (SCRIPTLOCK_FAULT_SEED), %d steps", seed, steps)
				runFaults(t, lc, rand.New(rand.NewPCG(seed, 0)), steps)
			})
		}
	})
	goleak.VerifyNone(t, before, redistest.IgnoreReaper())
}

const (
	faultLease   = 800 * time.Millisecond
	faultRenew   = 250 * time.Millisecond
	faultRelease = 300 * time.Millisecond
	faultSlack   = 1500 * time.Millisecond // a loaded machine's scheduling and reconnects
)

type faultRun struct {
	t      *testing.T
	lc     lockCase
	node   *redistest.Node
	px     *netproxy.Proxy
	c      *Client
	l      Locker
	rival  Locker
	direct rueidis.Client
	key    string
}

func runFaults(t *testing.T, lc lockCase, rng *rand.Rand, steps int) {
	node := redistest.Server(t, redistest.WithAOF())
	px := netproxy.New(t, node.Addr)
	prefix := sharedPrefix(t)
	rivalRC := rawClient(t, node.Addr)
	rivalClient := newTestClient(t, rivalRC, prefix, WithWatchdog(faultLease, faultRenew))
	rival := lc.make(t, rivalClient, "fault")
	if lc.name == "RWMutexRead" {
		rival = mustRW(t, rivalClient, "fault") // readers share; a writer must not get in
	}
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{px.Addr}, DisableCache: true, PipelineMultiplex: -1})
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(rc, prefix, WithWatchdog(faultLease, faultRenew), WithReleaseTimeout(faultRelease))
	if err != nil {
		t.Fatal(err)
	}
	f := &faultRun{t: t, lc: lc, node: node, px: px, c: c, l: lc.make(t, c, "fault"), rival: rival, direct: rivalRC}
	f.key, _ = lockKey(c.cfg.prefix, "fault")

	var held context.Context // the current hold's context, nil when none
	for step := range steps {
		owner := "step-" + strconv.Itoa(step)
		op := rng.IntN(3)
		if held != nil && rng.IntN(2) == 0 {
			op = 3 // unlock more often while holding
		}
		fault := f.fault(rng)
		switch op {
		case 0, 1, 2: // Lock with a deadline, TryLock(0), TryLock(wait)
			deadline := 300*time.Millisecond + time.Duration(rng.IntN(700))*time.Millisecond
			ctx, cancel := context.WithTimeout(WithOwner(context.Background(), owner), deadline)
			if held != nil && rng.IntN(3) == 0 {
				ctx, cancel = context.WithTimeout(held, deadline) // re-enter
			}
			start := time.Now()
			var lctx context.Context
			var err error
			switch op {
			case 0:
				lctx, err = f.l.Lock(ctx)
			case 1:
				lctx, err = f.l.TryLock(ctx, 0)
			default:
				lctx, err = f.l.TryLock(ctx, time.Duration(rng.IntN(400))*time.Millisecond)
			}
			elapsed := time.Since(start)
			cancel()
			if elapsed > deadline+faultSlack {
				t.Fatalf("step %d: acquisition with a %s deadline took %s", step, deadline, elapsed)
			}
			fault.wait()
			if err != nil {
				f.checkReleased(step, owner, "a failed acquisition")
				break
			}
			switch {
			case held == nil:
				held = lctx
			case ownerIn(lctx) == ownerIn(held):
				// Re-entered: one Unlock gives the inner hold back.
				if uerr := f.l.Unlock(lctx); uerr != nil && !errors.Is(uerr, ErrNotHeld) {
					f.awaitEnded(step, held, "a failed re-entrant Unlock")
				}
			case f.lc.name != "RWMutexRead":
				// A new owner got the lock: the old hold must have been lost.
				f.awaitEnded(step, held, "another owner's grant")
				held = lctx
			default:
				_ = f.l.Unlock(lctx) // a second reader
			}
		case 3:
			err := f.l.Unlock(held)
			fault.wait()
			f.awaitEnded(step, held, "Unlock")
			if err == nil {
				if f.holds(ownerIn(held)) {
					t.Fatalf("step %d: Unlock returned nil but the hold is still on the server", step)
				}
			} else {
				f.checkReleased(step, ownerIn(held), "a failed Unlock")
			}
			held = nil
		}
		if held != nil && ended(held) {
			// Lost during the step: nothing of it may stay.
			f.checkReleased(step, ownerIn(held), "a lost hold")
			held = nil
		}
		f.checkExclusion(step, held)
	}
	if held != nil {
		_ = f.l.Unlock(held)
	}
	c.Close()
	if held != nil && !ended(held) {
		t.Fatal("a hold outlived Close")
	}
	rc.Close()
	rivalClient.Close()
	rivalRC.Close()
}

// injected is a fault running alongside one step.
type injected struct{ done chan struct{} }

func (i injected) wait() { <-i.done }

// fault starts a random fault, or none, a little after the step begins.
func (f *faultRun) fault(rng *rand.Rand) injected {
	in := injected{done: make(chan struct{})}
	kind := rng.IntN(5)
	delay := time.Duration(rng.IntN(200)) * time.Millisecond
	short := faultLease / 3
	long := faultLease + faultLease/2
	freeze := []time.Duration{short, long}[rng.IntN(2)] // drawn here: rng is not goroutine-safe
	go func() {
		defer close(in.done)
		time.Sleep(delay)
		switch kind {
		case 1: // network freeze, shorter or longer than the lease
			f.px.Freeze()
			time.Sleep(freeze)
			f.px.Thaw()
		case 2: // the server stopped, shorter than the lease
			f.node.Pause()
			time.Sleep(short)
			f.node.Resume()
		case 3: // the server stopped, longer than the lease
			f.node.Pause()
			time.Sleep(long)
			f.node.Resume()
		case 4: // kill -9, restart from the AOF
			f.node.Kill()
			time.Sleep(100 * time.Millisecond)
			f.node.Restart(f.t)
		}
	}()
	return in
}

// holds reports whether the server has a hold of owner (straight to the
// server, not through the proxy). A server that does not answer yet counts
// as holding, so the callers wait.
func (f *faultRun) holds(owner string) bool {
	field := f.c.id + ":" + owner
	if f.lc.name == "RWMutex" {
		field += ":write"
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if !f.lc.reentrant() { // LeanMutex: a string key holding the owner
		v, err := f.direct.Do(ctx, f.direct.B().Get().Key(f.key).Build()).ToString()
		if rueidis.IsRedisNil(err) {
			return false
		}
		return err != nil || v == field
	}
	n, err := f.direct.Do(ctx, f.direct.B().Hexists().Key(f.key).Field(field).Build()).AsInt64()
	return err != nil || n == 1
}

// checkReleased: owner's hold must be gone from the server within the lease
// it may have set (the undo, or its expiry).
func (f *faultRun) checkReleased(step int, owner, what string) {
	f.t.Helper()
	if !eventually(faultLease+faultSlack+faultRelease, func() bool { return !f.holds(owner) }) {
		f.t.Fatalf("step %d: after %s the hold is still on the server past its lease", step, what)
	}
}

// ended reports whether the hold behind a lock context has ended (its
// contexts cancelled). The context itself may also end with its parent: an
// acquisition's deadline does not end the hold.
func ended(lctx context.Context) bool {
	return lctx.Value(lockCtxKey{}).(*lockCtx).hold.released()
}

// awaitEnded: the hold must have ended (allowing the scheduler a moment).
func (f *faultRun) awaitEnded(step int, lctx context.Context, what string) {
	f.t.Helper()
	if !eventually(faultSlack, func() bool { return ended(lctx) }) {
		f.t.Fatalf("step %d: the hold is still live after %s", step, what)
	}
}

// checkExclusion: while the holder's context is live, the server has its
// hold and a rival cannot get the lock.
func (f *faultRun) checkExclusion(step int, held context.Context) {
	f.t.Helper()
	if held == nil {
		return
	}
	if !f.holds(ownerIn(held)) {
		// The server lost it (expiry): the context must end now, if it has
		// not already.
		f.awaitEnded(step, held, "the server lost the hold")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rctx, err := f.rival.TryLock(ctx, 0)
	if err != nil {
		return
	}
	_ = f.rival.Unlock(rctx)
	// The server let a rival in: the holder's lease had ended, and so must
	// its context.
	f.awaitEnded(step, held, "a rival was granted the lock")
}
