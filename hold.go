package scriptlock

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// hold is this Client's record of a lock one owner holds: its hold count, its
// fencing token, its renewal, its loss deadline and the contexts that end with
// it.
type hold struct {
	name, key, field string
	side             side
	prim             primitive // the lock it holds, to give it back
	token            int64
	// lease is the lease the hold was acquired with: renewals and re-entrant
	// releases re-arm the lock with it.
	lease time.Duration

	count    int  // local holds; guarded by Client.mu
	renewing bool // the watchdog renews it; guarded by Client.mu
	// stray: an Extend or renewal of an earlier hold of the owner was in
	// flight when this one was granted, and may set its lock's expiry;
	// guarded by Client.mu.
	stray bool
	// watch is where the hold is with the watchdog (watchNone, watchPending,
	// watchAdded); guarded by mu.
	watch uint8
	// lastReleases counts releases of the owner's last hold in flight: they
	// give up every hold the owner has on the server, so a re-entry by a
	// goroutine sharing the owner waits for them; guarded by Client.mu.
	lastReleases int32      // beside renewing and watch: no padding word of its own
	renew        renewal    // before watchAdded: the first renewal's due and interval
	loss         *lossTimer // fires at lossAt; guarded by mu
	// lossAt is when the hold is presumed lost (monoNanos): the server lease as
	// of the last confirmed grant or renewal, counted from when that request
	// was sent, minus the drift margin.
	lossAt    atomic.Int64
	releasing atomic.Bool // the last local hold is being released
	done      atomic.Bool
	// shared: an acquisition of the hold took its owner from the caller's
	// context (WithOwner, or a lock context), so the owner may lock the
	// same key again while a release of this hold is still on its way; its
	// releases then name its fencing token (see MutexRelease).
	shared atomic.Bool

	mu    sync.Mutex // guards loss and the fields below
	cause error      // why the hold ended
	// leaseCalls counts the calls in flight, other than renewals, that set
	// the lock's expiry (a re-entry, Extend, a release that leaves holds),
	// and leaseSettled is when the last of them ended (monoNanos). A renewal
	// sent before then may have run on the server first, so the lease such
	// a call set may be the one in force: its reply cannot push the loss
	// deadline later. leaseSeq counts such calls sent (see leaseMark.soloOn).
	leaseCalls int32
	keepCalls  int32 // such calls in flight that keep the renewed lease (see leaseCallKeeping)
	// renewCalls counts the watchdog's renewals of the hold in flight (see
	// Client.renewalSent): one may run on the server after such a call and
	// cut a longer read lease key it reports as left to the watchdog's lease.
	renewCalls   int32
	leaseSettled int64
	leaseSeq     uint64
	// unknownLease is the shortest lease of an Extend (or a re-entry
	// that sets its lease) of the hold of unknown outcome, which may still run at any time (0: none): no
	// deadline moves past it from the sending of the call that sets it
	// (see Client.leaseUnknown).
	unknownLease time.Duration
	// unknownEvery is a third of unknownLease (0: none): the watchdog
	// renews the hold at least this often (see renewal.interval), else
	// each renewal's deadline, bounded by that lease, ended the hold
	// before the next renewal was due.
	unknownEvery atomic.Int64
	// reads, for a read hold its owner has re-entered: a lower bound
	// (monoNanos) of the expiry of each of the owner's read lease keys.
	// reads[0] is the first key's, which a release that leaves holds never
	// deletes (it deletes the last key); then one per re-entry, in no
	// particular order (concurrent re-entries of a shared owner reach the
	// server in any order). nil until the first re-entry.
	reads []int64
	ctxs  []heldCtx // every context handed out for this hold
	ctx0  [1]heldCtx
	obs   *holdObs // nil without an Observer
	// rc is the release context of the hold's first release, in the hold's
	// allocation (see releaseContextAt); rcTaken claims it.
	rc      boundedContext
	rcTaken atomic.Bool
}

// A renewing hold is handed to the watchdog only when its first renewal is
// near (its loss timer fires for that first): most holds end long before,
// and never touch the watchdog's shared schedule.
const (
	watchNone    uint8 = iota // not renewed by the watchdog
	watchPending              // renewed, not yet in the watchdog's schedule
	watchAdded                // in the watchdog's schedule (or being added)
)

// Instants kept as numbers (a hold's loss deadline, when its last lease call
// ended, a RedLock's validity) are nanoseconds on the monotonic clock since
// monoEpoch, as are the readings they are compared with: a step of the wall
// clock (NTP, an operator setting it) moves neither, so a deadline passes
// when its time has elapsed, not when the wall clock shows it.
var monoEpoch = time.Now()

// monoNanos is t as such a number (t must carry a monotonic reading, as
// time.Now and times derived from it do).
func monoNanos(t time.Time) int64 { return int64(t.Sub(monoEpoch)) }

// monoTime is the instant ns names, with its monotonic reading.
func monoTime(ns int64) time.Time { return monoEpoch.Add(time.Duration(ns)) }

// monoNow is monoNanos(time.Now()) read from the monotonic clock alone:
// time.Now also reads the wall clock, which these numbers never use, and a
// clock read is not free (on a 2-core VM, time.Now took 220 to 250 ns and
// time.Since 90 to 110; Lock+Unlock reads the clock several times).
func monoNow() int64 { return int64(time.Since(monoEpoch)) }

// monoClock is monoNanos(c.clock()): monoNow, or the clockHook's reading.
func (c *Client) monoClock() int64 {
	if f := c.clockHook.Load(); f != nil {
		return monoNanos((*f)())
	}
	return monoNow()
}

// clock reads the time a deadline is compared with: time.Now, or the
// Client's clockHook when set (by tests only, to step the wall clock).
func (c *Client) clock() time.Time {
	if f := c.clockHook.Load(); f != nil {
		return (*f)()
	}
	return time.Now()
}

// side tells the hashes of one lock name apart: a Mutex and a FairMutex share
// the exclusive layout; an RWMutex has a read and a write side.
type side uint8

const (
	sideExclusive side = iota
	sideRead
	sideWrite
	sideLean // LeanMutex: a string key, not a hash
)

// holdKey identifies a hold: the lock's key and the owner's field.
type holdKey struct{ key, field string }

func holdID(key, field string) holdKey { return holdKey{key, field} }

func (h *hold) released() bool { return h.done.Load() }

// renewToken is what a renewal or Extend of h names to reach h alone: the
// owner may release h and lock again under the same field before such a
// call runs on the server (a call given up on past its deadline can still
// land), and the call must not set the newer hold's lease. It is h's fencing
// token, also for a hold that is not shared: its owner can lock again under
// the owner id read from h's lock context, and the renewal scripts check the
// token at no cost to Lock and Unlock. A read hold's mark only for a shared
// hold (an unshared read hold is unmarked); 0 for none (an unfenced
// LeanMutex that is not shared draws no token).
func (h *hold) renewToken() int64 {
	if h.side != sideRead || h.shared.Load() {
		return h.token
	}
	return 0
}

// end finishes a hold: cause is context.Canceled for a release and
// ErrLockLost (possibly wrapping why) for a loss. Every lock context of the
// hold is cancelled before end returns. It returns the observer to report
// the end to (nil for none), which the caller calls once its own work for the
// hold is done.
func (h *hold) end(cause error) *holdObs {
	if !h.done.CompareAndSwap(false, true) {
		return nil
	}
	h.mu.Lock()
	h.cause = cause
	ctxs := h.ctxs
	h.ctxs = nil
	obs := h.obs
	switch {
	case obs != nil:
		obs.end = time.Now() // HoldEvent.Held ends here, whenever it is reported
	case h.prim != nil && h.prim.spec().c.cfg.observer != nil:
		// Ended before its acquisition attached the Observer: keep when,
		// for observeAcquire to report (rare: one allocation then).
		h.obs = &holdObs{end: time.Now()}
		obs = nil
	}
	if obs != nil && obs.pending {
		obs = nil // observeAcquire reports the end after the acquisition
	}
	h.mu.Unlock()
	for _, c := range ctxs {
		c.stop(cause)
	}
	return obs
}

// endedBy reports whether h ended with cause itself (not an equal error):
// whether the end that gave it cause was the one that ended h.
func (h *hold) endedBy(cause error) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cause == cause
}

// heldCtx is a context handed out for a hold (a lock's own, or a RedLock's
// per-node context) and the lockCtx it is tracked under.
type heldCtx struct {
	lc     *lockCtx
	cancel context.CancelCauseFunc
	// own: handed out by the lock's own Lock (not a RedLock's per-node
	// context, nor a MultiLock's watch of its member)
	own bool
}

// stop ends the context with cause.
func (c heldCtx) stop(cause error) {
	if c.cancel == nil {
		c.lc.end(cause) // a lazy lock context
		return
	}
	c.cancel(cause)
}

// track ties a lock context to the hold's lifetime.
func (h *hold) track(lc *lockCtx, cancel context.CancelCauseFunc) { h.trackAs(lc, cancel, false) }

// trackAs is track; own: the lock's own Lock hands lc out (heldCtx.own).
// cancel is nil for a lazy lock context (lockCtx.lazy).
func (h *hold) trackAs(lc *lockCtx, cancel context.CancelCauseFunc, own bool) {
	h.mu.Lock()
	if h.cause != nil {
		h.mu.Unlock()
		heldCtx{lc, cancel, own}.stop(h.cause)
		return
	}
	if h.ctxs == nil {
		h.ctxs = h.ctx0[:0] // most holds hand out one context: no allocation
	}
	h.ctxs = append(h.ctxs, heldCtx{lc, cancel, own})
	h.mu.Unlock()
}

// untrack ends the lock context found in ctx when it belongs to h: the
// context of a re-entrant hold ends with that hold's Unlock, and a hold
// re-entered many times does not pile up contexts.
func (h *hold) untrack(ctx context.Context) {
	lc, _ := ctx.Value(lockCtxKey{}).(*lockCtx)
	if lc == nil || lc.hold != h {
		return
	}
	h.untrackLC(lc)
}

// untrackOwned is untrack for an Unlock that gave back one of several holds:
// given a context that is none of h's (one that only names the owner:
// WithOwner, or another lock's context), it ends the most recent context
// h's Lock handed out, as RedLock and MultiLock do, so the context
// of the hold given back ends and a hold re-entered and released by owner
// does not pile up contexts.
func (h *hold) untrackOwned(ctx context.Context) {
	if lc, _ := ctx.Value(lockCtxKey{}).(*lockCtx); lc != nil && lc.hold == h {
		h.untrackLC(lc)
		return
	}
	h.mu.Lock()
	i := len(h.ctxs) - 1
	for i >= 0 && !h.ctxs[i].own {
		i-- // not the lock's own
	}
	// A context that ended with its parent is still its hold's, the one
	// given back: an earlier hold's context, whose hold lives on, is not
	// ended in its place.
	if i < 0 {
		h.mu.Unlock()
		return
	}
	c := h.ctxs[i]
	h.ctxs = append(h.ctxs[:i], h.ctxs[i+1:]...)
	h.mu.Unlock()
	c.stop(context.Canceled)
}

// gaveBack reports whether lc, one of h's contexts, was given back: by an
// Unlock made with it (untrack), or with h's release. Not when h ended
// otherwise (lost, or its release failed): the lock may still be held.
func (h *hold) gaveBack(lc *lockCtx) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cause != nil {
		return errors.Is(h.cause, context.Canceled) && !errors.Is(h.cause, ErrLockLost)
	}
	for _, c := range h.ctxs {
		if c.lc == lc {
			return false
		}
	}
	return true
}

// untrackLC ends and forgets the context tracked for lc.
func (h *hold) untrackLC(lc *lockCtx) {
	h.mu.Lock()
	for i, c := range h.ctxs {
		if c.lc == lc {
			h.ctxs = append(h.ctxs[:i], h.ctxs[i+1:]...)
			h.mu.Unlock()
			c.stop(context.Canceled)
			return
		}
	}
	h.mu.Unlock()
}
