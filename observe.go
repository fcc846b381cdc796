package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Observer receives what a Client's locks do, for metrics, traces and logs
// (the otel module implements it with OpenTelemetry). A Client without one,
// the default, does no extra work and allocates nothing for it.
//
// Methods are called synchronously on the lock's own path, and on the
// engine's own goroutines: they must be quick, must not block and must not
// use the Client's locks. The watchdog's events (the HoldEnd of a hold a
// renewal found lost, Renewal) are delivered in order from a goroutine of
// the Client's, so that one that blocks delays the events after it, not the
// renewals of other holds; while it blocks, the Renewal events (and log
// records) waiting for it beyond 1024 are dropped, counted in a WARN once
// they flow again (a HoldEnd never is), and Close waits for what is waiting. They may call the Client's Close (to shut a service down
// when a hold is lost, say), which then begins the close and returns without
// waiting for it (see Client.Close). Embed NopObserver to implement only
// some of them.
//
// A panic in AcquireStart, AcquireEnd, ReleaseStart or ReleaseEnd, which
// report the caller's own call, reaches the caller. Should AcquireEnd panic
// after a grant, the grant is given back (its caller never receives it)
// and its HoldEnd (EndUnlocked) follows; should ReleaseStart panic, the
// release still runs, before the panic goes on: a caller that recovers is not left holding a lock it cannot release.
// So for one that ends the caller's goroutine (runtime.Goexit, a test's
// t.FailNow): the grant is given back, the release runs, as it unwinds.
// HoldEnd, Renewal and Guard report the engine's own events, often on its
// own goroutines (the watchdog, a loss timer, Close): a panic there is
// recovered and logged at ERROR on the Client's logger, the event is dropped
// and the engine carries on. They are called once the engine's own work for
// the event is done: a hold has ended everywhere (its contexts, its loss
// timer, the watchdog) before its HoldEnd, and the holds a watchdog round
// finds lost, a Close or a ForceUnlock ends have all ended before the first
// of their HoldEnds (and a round's Renewal follows them): a slow Observer
// keeps no owner working under a lock found lost.
//
// Every AcquireStart is followed by one AcquireEnd, every ReleaseStart by
// one ReleaseEnd. Nothing is reported once the Client's Close has returned:
// Close waits for the calls in flight to report their end, and calls begun
// after Close began are not reported. A Close called from a callback is the
// exception: it returns before the close is complete, and the events of the
// close (the holds it ends, the calls it waited for) may follow it.
type Observer interface {
	// AcquireStart is called as Lock or TryLock (RLock, TryRLock), or a
	// semaphore's Acquire or TryAcquire, starts. The context it returns (for
	// example with a span) is handed to AcquireEnd; the lock itself keeps
	// deriving from the caller's context.
	AcquireStart(ctx context.Context, op Op) context.Context
	// AcquireEnd reports how the acquisition ended.
	AcquireEnd(ctx context.Context, op Op, e AcquireEvent)
	// ReleaseStart and ReleaseEnd bracket Unlock (and RUnlock) and a
	// semaphore's Release.
	ReleaseStart(ctx context.Context, op Op) context.Context
	ReleaseEnd(ctx context.Context, op Op, e ReleaseEvent)
	// HoldEnd reports the end of a hold, however it ended, always after the
	// AcquireEnd that reported the hold acquired (a hold can end before its
	// Lock returns). ctx is the context the hold was acquired with (carrying
	// the caller's span); it may be done already.
	HoldEnd(ctx context.Context, op Op, e HoldEvent)
	// Renewal reports one watchdog round trip renewing a batch of leases.
	Renewal(e RenewalEvent)
	// Guard reports one failover-guard wait for the replicas'
	// acknowledgements of a grant, a lock's or a semaphore's permits (one,
	// or as many as WithGuardReplicas asks; a refused attempt reports none).
	Guard(e GuardEvent)
}

// WithObserver sets the Client's Observer, which sees every handle's locks.
func WithObserver(o Observer) Option {
	return clientOption(func(c *config) { c.observer = o })
}

// NopObserver implements Observer and does nothing; embed it to implement
// only the methods you need.
type NopObserver struct{}

func (NopObserver) AcquireStart(ctx context.Context, _ Op) context.Context { return ctx }
func (NopObserver) AcquireEnd(context.Context, Op, AcquireEvent)           {}
func (NopObserver) ReleaseStart(ctx context.Context, _ Op) context.Context { return ctx }
func (NopObserver) ReleaseEnd(context.Context, Op, ReleaseEvent)           {}
func (NopObserver) HoldEnd(context.Context, Op, HoldEvent)                 {}
func (NopObserver) Renewal(RenewalEvent)                                   {}
func (NopObserver) Guard(GuardEvent)                                       {}

// Primitive names the kind of lock in an Op. The set is closed and small, so
// it is safe as a metric attribute.
type Primitive string

// The primitives. A RedLock reports its lock on each node as that node's
// Mutex, and a MultiLock each member as what the member is.
const (
	PrimitiveMutex     Primitive = "mutex"         // Mutex
	PrimitiveFairMutex Primitive = "fair_mutex"    // FairMutex
	PrimitiveLeanMutex Primitive = "lean_mutex"    // LeanMutex
	PrimitiveRWRead    Primitive = "rwmutex_read"  // RWMutex's read side (RLock, RUnlock)
	PrimitiveRWWrite   Primitive = "rwmutex_write" // RWMutex's write side (Lock, Unlock)
	// Semaphore permits are not holds: their acquisitions and releases are
	// reported, no HoldEnd.
	PrimitiveSemaphore       Primitive = "semaphore"        // Semaphore
	PrimitivePermitSemaphore Primitive = "permit_semaphore" // PermitSemaphore
)

// Holds reports whether acquisitions of p are holds that end with HoldEnd.
func (p Primitive) Holds() bool {
	return p != PrimitiveSemaphore && p != PrimitivePermitSemaphore
}

// Op is what an event is about. Name is the lock's name as the program gave
// it: it can come from requests, so it is unbounded and belongs in a metric
// attribute only when the user says so.
type Op struct {
	Primitive Primitive
	Name      string
}

// AcquireOutcome says how an acquisition ended.
type AcquireOutcome uint8

const (
	Acquired  AcquireOutcome = iota // a new hold
	Reentered                       // the owner already held it: one more hold
	Contended                       // TryLock's (TryAcquire's) wait ran out while others held the lock (the permits)
	TimedOut                        // the caller's context deadline passed
	Cancelled                       // the caller's context was cancelled
	Failed                          // an error: Redis unreachable (also a TryLock or TryAcquire wait whose last attempt or subscription it did not answer, or a RedLock node's or MultiLock member's call its node timeout or their wait cut off: NotAcquiredError.Unanswered), not replicated, invalid input
)

func (o AcquireOutcome) String() string {
	switch o {
	case Acquired:
		return "acquired"
	case Reentered:
		return "reentered"
	case Contended:
		return "contended"
	case TimedOut:
		return "timed_out"
	case Cancelled:
		return "cancelled"
	}
	return "error"
}

// AcquireEvent describes one Lock or TryLock call.
type AcquireEvent struct {
	Outcome  AcquireOutcome
	Wait     time.Duration // from the call to its end
	Attempts int           // acquire script runs
	Wakeups  int           // waits ended by a release message
	Timers   int           // waits ended by the fallback timer (lease end or a lost message)
	Retries  int           // attempts made again because the one before ran nothing (see below)
	Token    int64         // fencing token of a new hold, 0 otherwise
	Err      error         // nil for Acquired, Reentered and Contended
}

// ReleaseEvent describes one Unlock call.
type ReleaseEvent struct {
	Duration time.Duration
	Retries  int   // calls made again because the one before ran nothing (see below)
	Err      error // nil, or errors.Is ErrNotHeld, or a Redis error
	// GivenBack is true for the engine's own release of a member or node
	// that still held when the MultiLock or RedLock it is part of was lost
	// (no Unlock of the program), members and nodes of a MultiLock or
	// RedLock member included: its hold ends as EndLost.
	GivenBack bool
}

// Retries in AcquireEvent and ReleaseEvent count calls that Redis refused
// without running anything (TRYAGAIN while a Cluster slot moves, CLUSTERDOWN,
// LOADING, READONLY, MASTERDOWN, NOREPLICAS, BUSY, OOM, MISCONF) or that could not be sent (the node could not be dialled),
// and acquisition attempts whose connection broke and that were settled; each
// was made again. Outside resharding, failovers and restarts they stay 0: a
// rising count says a call is waiting on the server, not on the lock.

// HoldEndCause says why a hold ended.
type HoldEndCause uint8

const (
	EndUnlocked HoldEndCause = iota // released by Unlock
	EndLost                         // renewal found it gone or owned by another, or none was confirmed before the loss deadline
	EndExpired                      // an explicit lease ran out before Unlock
	EndClosed                       // the Client was closed while it was held
)

func (c HoldEndCause) String() string {
	switch c {
	case EndUnlocked:
		return "unlocked"
	case EndLost:
		return "lost"
	case EndExpired:
		return "expired"
	}
	return "closed"
}

// HoldEvent describes the end of a hold.
type HoldEvent struct {
	Cause HoldEndCause
	Held  time.Duration // from the acquiring call to the end
	Err   error         // the cause as the lock's context reports it; for a member or node given back by a lost MultiLock or RedLock (ReleaseEvent.GivenBack), errors.Is ErrLockLost
}

// RenewalEvent describes one watchdog round trip (on a Cluster, one hash
// slot's: each slot's holds renew apart). Every lease of the batch is counted
// once: Batch = Renewed + Lost + Failed + Ended.
type RenewalEvent struct {
	Batch    int           // leases in the round trip
	Renewed  int           // confirmed
	Lost     int           // found gone or held by another owner
	Failed   int           // not confirmed this time (or being released, or, with the failover guard, not acknowledged by the replicas it waits for), retried soon
	Ended    int           // held no more by the time the reply came (released, lost or closed meanwhile): not renewed again
	Duration time.Duration // round-trip latency
}

// GuardEvent describes one failover-guard wait.
type GuardEvent struct {
	Acknowledged bool          // the replicas waited for (WithGuardReplicas) acknowledged the acquisition in time
	Duration     time.Duration // script and WAIT, one pipelined round trip
}

// holdObs is what a hold needs to report its end; nil without an Observer.
type holdObs struct {
	o     Observer
	log   *slog.Logger // the Client's, for a panicking HoldEnd
	ctx   context.Context
	op    Op
	start time.Time
	// pending: the acquisition is not reported yet, so the hold's end is
	// not reported by hold.end but after AcquireEnd; guarded by hold.mu.
	pending bool
	// end: when the hold ended (set by hold.end, also before the Observer
	// was attached), which Held runs to: its report may come later, after
	// other holds' (Close, a watchdog round, the acquisition's AcquireEnd).
	end time.Time
}

func (h *holdObs) ended(cause error) {
	e := HoldEvent{Held: h.end.Sub(h.start), Err: cause}
	switch {
	case errors.Is(cause, context.Canceled):
		e.Cause = EndUnlocked
	case errors.Is(cause, ErrClosed):
		e.Cause = EndClosed
	case errors.Is(cause, errLeaseEnded):
		e.Cause = EndExpired
	default:
		e.Cause = EndLost
	}
	observerCall(h.log, "HoldEnd", func() { h.o.HoldEnd(h.ctx, h.op, e) })
}

// waitStats counts what waitNotified did for one acquisition. An observed
// call puts it in the context it runs with; done marks it finished, as lock
// contexts derived from that context carry it on.
type waitStats struct {
	attempts, wakeups, timers, retries int
	done                               bool
}

type waitStatsKey struct{}

// statsFrom returns the counters of the observed call running with ctx.
func (c *Client) statsFrom(ctx context.Context) *waitStats {
	if c.cfg.observer == nil {
		return nil
	}
	return statsIn(ctx)
}

// statsIn is statsFrom for code that has no Client at hand; it costs a
// context lookup, so hot paths call statsFrom, which skips it when nothing
// observes.
func statsIn(ctx context.Context) *waitStats {
	st, _ := ctx.Value(waitStatsKey{}).(*waitStats)
	if st == nil || st.done {
		return nil
	}
	return st
}

// retried counts a call made again after a retryLater reply in the observed
// call running with ctx, if any.
func retried(ctx context.Context) {
	if st := statsIn(ctx); st != nil {
		st.retries++
	}
}

// observing reports whether a call with ctx is to be reported and is not yet
// running under observeAcquire or observeRelease.
func (c *Client) observing(ctx context.Context) bool {
	return c.cfg.observer != nil && ctx != nil && c.statsFrom(ctx) == nil
}

// observeAcquire runs acquire under the Client's Observer: it reports the
// start, the outcome with the wait counters, and ties the hold's end to it.
func (c *Client) observeAcquire(ctx context.Context, op Op, acquire func(context.Context) (context.Context, error), giveBack func(context.Context) error) (context.Context, error) {
	if !c.enter() {
		// Close has begun: the call fails with ErrClosed, unreported.
		return acquire(unobserved(ctx))
	}
	// In flight until its events are out: Close waits for the AcquireEnd
	// and for the HoldEnd of a hold it ends meanwhile.
	defer c.leave()
	o := c.cfg.observer
	start := time.Now()
	octx := o.AcquireStart(ctx, op)
	st := &waitStats{}
	returned := false
	defer endAcquireOnPanic(o, octx, op, start, st, &returned)
	lctx, err := acquire(context.WithValue(ctx, waitStatsKey{}, st))
	returned = true
	st.done = true
	e := AcquireEvent{Wait: time.Since(start), Attempts: st.attempts, Wakeups: st.wakeups, Timers: st.timers, Retries: st.retries, Err: err}
	var first *hold // a new hold, whose observer this call attaches
	switch {
	case err == nil:
		e.Outcome = Reentered
		if lc, ok := lctx.(*lockCtx); ok && lc.hold != nil {
			h := lc.hold
			h.mu.Lock()
			if h.obs == nil || h.obs.o == nil {
				// A holdObs without its Observer keeps only when the hold
				// ended, before this call attached it (see hold.end).
				var end time.Time
				if h.obs != nil {
					end = h.obs.end
				}
				e.Outcome, e.Token = Acquired, lc.token
				h.obs = &holdObs{o: o, log: c.log, ctx: ctx, op: op, start: start, pending: true, end: end}
				first = h
			}
			h.mu.Unlock()
		}
	default:
		e.Outcome, e.Err = failedOutcome(err)
	}
	if err == nil {
		giveBackOnPanic(func() { o.AcquireEnd(octx, op, e) }, func() {
			_ = giveBack(unobserved(lctx))
			// AcquireEnd was told of the hold before it panicked: its end,
			// the give-back, is reported too (a held count returns to 0).
			first.reportEnd()
		})
	} else {
		o.AcquireEnd(octx, op, e)
	}
	first.reportEnd()
	return lctx, err
}

// reportEnd, once the acquisition of a new hold h has been reported, lets
// its end be reported: now when it ended before or while the acquisition was
// reported, else by hold.end. Nothing for a nil h (not a new hold).
func (h *hold) reportEnd() {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.obs.pending = false
	ended := h.cause
	h.mu.Unlock()
	if ended != nil {
		h.obs.ended(ended)
	}
}

// errPanicked is the error an AcquireEvent or ReleaseEvent reports for a
// call that panicked (in the caller's context, say) before it returned.
var errPanicked = errors.New("scriptlock: the call panicked")

// endAcquireOnPanic, deferred after AcquireStart, reports the acquisition's
// end when it panicked before returning (*returned is false): every
// AcquireStart has its AcquireEnd. The panic goes on.
func endAcquireOnPanic(o Observer, octx context.Context, op Op, start time.Time, st *waitStats, returned *bool) {
	if *returned {
		return
	}
	st.done = true
	o.AcquireEnd(octx, op, AcquireEvent{Outcome: Failed, Wait: time.Since(start), Attempts: st.attempts, Wakeups: st.wakeups, Timers: st.timers, Retries: st.retries, Err: errPanicked})
}

// observerCall runs f, a call of HoldEnd, Renewal, Guard (or a release's
// ReleaseStart no caller waits for), and logs a panic of the Observer (even
// a panic(nil): catch) instead of letting it through: these report the
// engine's own events, often on its own goroutines, where a panic would
// crash the process or leave the engine's work (ending holds, renewing
// leases, registering a grant) half done.
func observerCall(log *slog.Logger, method string, f func()) {
	if v, stack, panicked := catch(f); panicked {
		log.Error("Observer panicked; event dropped", "method", method, "panic", v, "stack", stack)
	}
}

// giveBackOnPanic runs call, an Observer's AcquireEnd after a grant, and
// gives the grant back when the Observer panics (even with nil: goOnAfter):
// its caller never receives it, and it would otherwise stay held (a watchdog
// hold renewed until Close) with no one to release it. The panic then goes
// on.
func giveBackOnPanic(call, giveBack func()) { goOnAfter(call, giveBack) }

// givenBackKey marks the context with which a lost MultiLock or RedLock
// gives back a member or node that still held (givenBack): that release is
// the loss's, not an Unlock of the program, and is reported so.
type givenBackKey struct{}

// errGivenBack is the end reported for a hold given back that way.
var errGivenBack = fmt.Errorf("%w: given back after the MultiLock or RedLock it is part of was lost", ErrLockLost)

// givenBack marks ctx, a member's or node's lock context, for its give-back.
func givenBack(ctx context.Context) context.Context {
	return context.WithValue(ctx, givenBackKey{}, true)
}

// unobserved marks ctx so that the calls made with it are not reported: the
// engine's own give-back of a grant its caller never received.
func unobserved(ctx context.Context) context.Context {
	return context.WithValue(ctx, waitStatsKey{}, &waitStats{})
}

// failedOutcome classifies an acquisition error.
func failedOutcome(err error) (AcquireOutcome, error) {
	var nae *NotAcquiredError
	switch {
	case errors.As(err, &nae) && nae.Unanswered:
		// The server, not another owner, kept the lock: no contention.
		return Failed, err
	case errors.As(err, &nae):
		return Contended, nil
	case errors.Is(err, context.DeadlineExceeded):
		return TimedOut, err
	case errors.Is(err, context.Canceled):
		return Cancelled, err
	}
	return Failed, err
}

// observeTake runs a semaphore acquisition, which yields a value and ok
// instead of a lock context, under the Client's Observer.
func observeTake[T any](c *Client, ctx context.Context, op Op, take func(context.Context) (T, bool, error), giveBack func(context.Context, T) error) (T, bool, error) {
	if !c.enter() {
		return take(unobserved(ctx)) // Close has begun (see observeAcquire)
	}
	defer c.leave()
	o := c.cfg.observer
	start := time.Now()
	octx := o.AcquireStart(ctx, op)
	st := &waitStats{}
	returned := false
	defer endAcquireOnPanic(o, octx, op, start, st, &returned)
	v, ok, err := take(context.WithValue(ctx, waitStatsKey{}, st))
	returned = true
	st.done = true
	e := AcquireEvent{Wait: time.Since(start), Attempts: st.attempts, Wakeups: st.wakeups, Timers: st.timers, Retries: st.retries}
	switch {
	case err != nil:
		e.Outcome, e.Err = failedOutcome(err)
	case ok:
		e.Outcome = Acquired
	default:
		e.Outcome = Contended
	}
	if err == nil && ok {
		giveBackOnPanic(func() { o.AcquireEnd(octx, op, e) }, func() { _ = giveBack(unobserved(ctx), v) })
	} else {
		o.AcquireEnd(octx, op, e)
	}
	return v, ok, err
}

// observeRelease runs release under the Client's Observer.
func (c *Client) observeRelease(ctx context.Context, op Op, release func(context.Context) error) error {
	if !c.releases.enter() {
		// Close has begun: nothing is reported after it returns. (A
		// semaphore's Release still works after Close.) The release may
		// still end a hold before Close does, and report its HoldEnd:
		// counted as a loss timer's run, so that Close waits for it.
		if c.timerStart() {
			defer c.timerDone()
		}
		return release(unobserved(ctx))
	}
	defer c.releases.done() // Close waits for the ReleaseEnd
	o := c.cfg.observer
	start := time.Now()
	octx := releaseStart(o, ctx, op, release)
	st := &waitStats{}
	returned := false
	defer func() {
		if !returned {
			// The release panicked (the caller's context, say): its end
			// is reported all the same before the panic goes on.
			st.done = true
			o.ReleaseEnd(octx, op, ReleaseEvent{Duration: time.Since(start), Retries: st.retries, Err: errPanicked, GivenBack: ctx.Value(givenBackKey{}) != nil})
		}
	}()
	err := release(context.WithValue(ctx, waitStatsKey{}, st))
	returned = true
	st.done = true
	o.ReleaseEnd(octx, op, ReleaseEvent{Duration: time.Since(start), Retries: st.retries, Err: err, GivenBack: ctx.Value(givenBackKey{}) != nil})
	return err
}

// releaseStart calls the Observer's ReleaseStart. Should it panic, the
// release the caller asked for still runs (unreported) before the panic goes
// on: a caller that recovers must not be left holding the lock.
func releaseStart(o Observer, ctx context.Context, op Op, release func(context.Context) error) (octx context.Context) {
	giveBackOnPanic(func() { octx = o.ReleaseStart(ctx, op) }, func() { _ = release(unobserved(ctx)) })
	return octx
}

// opOf names what an engine primitive's events are about.
func opOf(p primitive) Op {
	name := p.spec().name
	switch p := p.(type) {
	case *FairMutex:
		return Op{PrimitiveFairMutex, name}
	case *LeanMutex:
		return Op{PrimitiveLeanMutex, name}
	case *rwSide:
		if p.write {
			return Op{PrimitiveRWWrite, name}
		}
		return Op{PrimitiveRWRead, name}
	}
	return Op{PrimitiveMutex, name}
}

// RequestOutcome is what lock or Idempotency-Key middleware (echolock,
// grpclock) did with one request, reported through their outcome hooks. The
// set is closed and small, so it is safe as a metric attribute.
type RequestOutcome string

const (
	RequestLocked              RequestOutcome = "locked"               // the handler ran under the lock
	RequestContended           RequestOutcome = "contended"            // another request held the lock for the whole wait
	RequestKeyInvalid          RequestOutcome = "key_invalid"          // lock key or Idempotency-Key missing or invalid
	RequestRedisDown           RequestOutcome = "redis_down"           // Redis unreachable; the request was refused
	RequestFailOpen            RequestOutcome = "fail_open"            // Redis unreachable; the handler ran without the lock
	RequestCanceled            RequestOutcome = "canceled"             // the request's context ended while it waited
	RequestLockLost            RequestOutcome = "lock_lost"            // the lock was lost while the handler ran
	RequestExecuted            RequestOutcome = "executed"             // a first request with an Idempotency-Key ran
	RequestReplayed            RequestOutcome = "replayed"             // a completed duplicate got the stored response
	RequestIdempotencyConflict RequestOutcome = "idempotency_conflict" // a duplicate in flight, a reused key, an unstorable response, a stored gzip response too large to decode for it
	RequestOverBudget          RequestOutcome = "over_budget"          // the caller's scope keeps as many stored responses as it may
	RequestBodyRefused         RequestOutcome = "body_refused"         // the body was over the limit, unreadable, or read by a middleware in front (HTTP 413, 400, 500); refused before it ran
)

// RequestOutcomeFunc receives the outcome of each request. It runs on the
// request's path: it must be quick.
type RequestOutcomeFunc func(ctx context.Context, o RequestOutcome)

// Report calls f when it is set.
func (f RequestOutcomeFunc) Report(ctx context.Context, o RequestOutcome) {
	if f != nil {
		f(ctx, o)
	}
}
