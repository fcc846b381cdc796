package scriptlock

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
)

// watchdog renews the leases of every lock a Client holds without an explicit
// lease. One goroutine per Client serves all of them: a heap orders the locks
// by next renewal, and every lock due within the same short window is renewed
// in one pipelined batch.
type watchdog struct {
	rc        rueidis.Client
	onLost    func(*hold, error) lossReport // ends the hold; the report logs it and tells the Observer
	onRenewed func(*hold, time.Time)
	onSend    func(*hold, time.Time) // a renewal of the hold is about to be sent
	onDone    func(*hold)            // that renewal's reply is in (or it failed)
	// onUnknown: a renewal of the hold that names no token (see
	// hold.renewToken), sent at the time given, failed without an answer,
	// and may still run on a newer hold of the owner (see
	// Client.unknownSent). Nil: none.
	onUnknown func(*hold, time.Time)
	obs       Observer     // nil: none
	log       *slog.Logger // for a panicking Observer
	// rep delivers the reports of the rounds (their losses' log records
	// and HoldEnds, their Renewal events) off the rounds' goroutines.
	rep *reporter
	// replicas counts the primary's replicas for the failover guard, and
	// sendGuarded sends guarded holds' renewals with a WAIT after them
	// (Client.replicasNow, Client.sendGuardedBatch); nil: no guard.
	replicas    func(key string, want int) int
	sendGuarded func(context.Context, time.Duration, []guardedCall) []guardedReply
	// nodeOf names the Cluster node serving a key ("" when unknown), whose
	// guarded rounds share that node's places in dedicated.
	nodeOf func(key string) string
	// ownerID names the node ID of the primary a key's count is of ("" when
	// unknown; nil: none), for a renewal that reaches another (rerouted).
	ownerID func(key string) string
	// renewedHook, when set (by tests only, before the first hold), runs
	// after a round trip's replies arrived and before the renewed holds are
	// re-armed from them (and put back in the schedule).
	renewedHook func()
	// sendHook, when set (by tests only, before the first hold), runs after
	// a batch was taken from the schedule and before it is sent.
	sendHook func()

	// dedicated bounds the guarded rounds in flight on a Cluster, each on a
	// dedicated connection, to guardedGroups per node (by nodeOf; guarded by
	// mu). Per node: a frozen node's rounds each keep their place until
	// their holds' loss deadlines, and must not take the places of rounds
	// for the other nodes.
	dedicated map[string]chan struct{}

	mu    sync.Mutex
	queue renewHeap
	kick  chan struct{}
	// orphans bounds, per hold key, the renewals in flight of holds that
	// ended meanwhile and whose renewals name no token (see
	// hold.renewToken): the script names the owner's
	// field, and may run on a newer hold of the owner (one taken under an
	// owner id read from the ended hold's context), whose loss deadline the
	// grant keeps within it. Guarded by mu.
	orphans map[holdKey]extendsInFlight
	// orphaned is len(orphans), set under mu: a grant reads it without mu,
	// and looks up orphans (under mu) only when there are some.
	orphaned atomic.Int32

	renewals, batches atomic.Int64 // confirmed renewals and round trips, for observability
	// panics counts the renewal calls that panicked (a client wrapper's)
	// since renewals last went through without one (each): the first of
	// each kind (panicKinds) is logged at ERROR, the others at DEBUG. A
	// wrapper that panics at every call logged an ERROR at every round of
	// every hold, and at each of the renewals made again soon after a
	// failed one.
	panics atomic.Int64
	// panicMu guards panicSeen, the kinds of panic logged at ERROR since
	// panics was last reset: a panic of another kind is news, which a count
	// alone logged at DEBUG behind the first.
	panicMu   sync.Mutex
	panicSeen map[string]bool

	// rounds counts the renewal rounds in flight, each on a goroutine of
	// its own (see renewDue); run waits for them before it returns.
	rounds sync.WaitGroup

	// scripted holds the kinds of renewal (mutexRenewal for Mutex-shaped
	// holds) each node (scriptNode) has answered, so has the script of:
	// until then they go as EVAL (renewPlain). Guarded by scriptedMu, apart
	// from mu, which the schedule takes.
	scriptedMu sync.Mutex
	scripted   map[scriptedKey]bool
	// trips holds, per node, how long its last answered round of
	// renewals took (renewBatch), which tells whether a renewal sent as
	// EVALSHA may take a second round trip (slowFor). Guarded by
	// scriptedMu.
	trips map[string]time.Duration
}

type scriptedKey struct {
	kind *renewKind
	node string
}

// renewal is a lock's place in the watchdog's schedule.
type renewal struct {
	h     *hold
	due   time.Time
	every time.Duration
	index int        // in the heap; -1 when removed
	kind  *renewKind // nil: a Mutex-shaped hold (MutexRenew)
	// sent is when the batch holding it was taken for sending (monoNanos);
	// 0 when no renewal of it is in flight. orphan: its hold ended while it
	// was, and it is counted in watchdog.orphans. Guarded by watchdog.mu.
	sent   int64
	orphan bool
	// soon: renew again as soon as the round in flight ends (see soon).
	soon bool
}

// renewKind is a way of renewing holds (MutexRenew, or for example an
// RWMutex read hold's). Due holds of every kind share one pipelined round
// trip (renewPlain; with the failover guard's WAIT, renewGuarded).
type renewKind struct {
	// command builds h's renewal (EVALSHA), and decode reads its reply:
	// held=false means the hold is gone on the server.
	command func(rc rueidis.Client, h *hold) (rueidis.Completed, error)
	decode  func(rueidis.RedisResult) (bool, error)
}

// mutexRenewal builds and reads a Mutex-shaped hold's renewal (MutexRenew).
var mutexRenewal = &renewKind{
	command: func(rc rueidis.Client, h *hold) (rueidis.Completed, error) {
		return generated.MutexRenewCommand(rc, h.key, h.prim.spec().fence, h.lease, h.field, h.renewToken())
	},
	decode: generated.DecodeMutexRenew,
}

type renewReply struct {
	held bool
	err  error
	// unacked: the failover guard is on and the primary has replicas, but
	// none acknowledged the renewal in time.
	unacked bool
}

const maxRenewBatch = 1000

func newWatchdog(rc rueidis.Client, onLost func(*hold, error) lossReport, onRenewed, onSend func(*hold, time.Time), onDone func(*hold)) *watchdog {
	return &watchdog{rc: rc, onLost: onLost, onRenewed: onRenewed, onSend: onSend, onDone: onDone, kick: make(chan struct{}, 1), dedicated: map[string]chan struct{}{}}
}

// add schedules renewals of h's lease every 'every', from 'at' on; r is the
// hold's own schedule entry. Read and write holds renew with RwReadRenew and
// RwWriteRenew, lean holds with LeanRenew, every other hold with MutexRenew.
func (w *watchdog) add(r *renewal, h *hold, every time.Duration, at time.Time, p primitive) {
	var kind *renewKind
	switch p.side() {
	case sideRead:
		kind = rwReadRenewal
	case sideWrite:
		kind = rwWriteRenewal
	case sideLean:
		kind = leanRenewal
	}
	w.mu.Lock()
	if h.released() {
		// Ended before it was scheduled (Client.end removes after ending).
		w.mu.Unlock()
		return
	}
	*r = renewal{h: h, due: at.Add(every), every: every, kind: kind}
	heap.Push(&w.queue, r)
	first := r.index == 0
	w.mu.Unlock()
	if first {
		signal(w.kick)
	}
}

// remove stops renewing r, whose hold has ended. Safe to call more than
// once. When a renewal of a hold that names no token is in flight, it
// returns the loss deadline that renewal sets at the latest (zero: none),
// and keeps it as a bound for the owner's next hold until its reply is in.
func (w *watchdog) remove(r *renewal) time.Time {
	var bound time.Time
	w.mu.Lock()
	switch {
	case r.index >= 0:
		heap.Remove(&w.queue, r.index)
	case r.sent != 0 && !r.orphan && r.h.renewToken() == 0:
		r.orphan = true
		bound = lossDeadline(monoTime(r.sent), r.h.lease)
		id := holdID(r.h.key, r.h.field)
		if w.orphans == nil {
			w.orphans = map[holdKey]extendsInFlight{}
		}
		e := w.orphans[id]
		if e.n == 0 || monoNanos(bound) < e.at {
			e.at = monoNanos(bound)
		}
		e.n++
		w.orphans[id] = e
		w.orphaned.Store(int32(len(w.orphans)))
	}
	w.mu.Unlock()
	return bound
}

// soon renews r's hold now, or, with a renewal of it in flight (which may
// have run on the server before the call that asked), as soon as that
// round ends.
func (w *watchdog) soon(r *renewal) {
	w.mu.Lock()
	if r.index < 0 {
		// In a round (or removed, its hold ended: then nothing reads it).
		r.soon = true
		w.mu.Unlock()
		return
	}
	r.due = time.Now()
	heap.Fix(&w.queue, r.index)
	first := r.index == 0
	w.mu.Unlock()
	if first {
		signal(w.kick)
	}
}

// orphanBound is the bound an orphaned renewal in flight sets on a new hold
// of id (see orphans); ok is false for none.
func (w *watchdog) orphanBound(id holdKey) (at time.Time, ok bool) {
	if w.orphaned.Load() == 0 {
		// As if read under mu: an orphan counted after this load was
		// counted after the lookup it saves would have been made.
		return monoTime(0), false
	}
	w.mu.Lock()
	e, ok := w.orphans[id]
	w.mu.Unlock()
	return monoTime(e.at), ok
}

// settledLocked ends r's renewal in flight; w.mu held.
func (w *watchdog) settledLocked(r *renewal) {
	r.sent = 0
	if !r.orphan {
		return
	}
	r.orphan = false
	id := holdID(r.h.key, r.h.field)
	if e := w.orphans[id]; e.n <= 1 {
		delete(w.orphans, id)
		w.orphaned.Store(int32(len(w.orphans)))
	} else {
		e.n--
		w.orphans[id] = e
	}
}

func (w *watchdog) run(ctx context.Context) {
	// The rounds' calls end with ctx: Close, which waits for run, then
	// hears of no renewal after it returns.
	defer w.rounds.Wait()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		w.mu.Lock()
		wait := time.Hour
		if len(w.queue) > 0 {
			wait = time.Until(w.queue[0].due)
		}
		w.mu.Unlock()
		if wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-w.kick:
				if !timer.Stop() {
					<-timer.C
				}
				continue
			case <-timer.C:
			}
		}
		w.renewDue(ctx)
	}
}

// renewDue renews every lock due now or within a tenth of its interval, so
// locks taken close together share one round trip.
func (w *watchdog) renewDue(ctx context.Context) {
	now := time.Now()
	sentAt := monoNanos(now)
	w.mu.Lock()
	var batch []*renewal
	for len(w.queue) > 0 && !w.queue[0].due.After(now.Add(w.queue[0].every/10)) && len(batch) < maxRenewBatch {
		r := heap.Pop(&w.queue).(*renewal)
		r.sent = sentAt
		batch = append(batch, r)
	}
	w.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	// A round that waits (a guarded renewal's WAIT on a stalled replica, a
	// node that stopped answering) must not hold up the renewals of other
	// holds, whose leases may be shorter than the time it waits: each round
	// runs on its own goroutine, and the holds whose renewals wait for
	// replicas go in a round apart. A hold is in one round at a time (taken
	// from the schedule until its round ends).
	var guarded []*renewal
	if w.replicas != nil {
		plain := batch[:0:0]
		for _, r := range batch {
			if w.guardOf(r).on() {
				guarded = append(guarded, r)
			} else {
				plain = append(plain, r)
			}
		}
		batch = plain
	}
	if w.rc.Mode() != rueidis.ClientModeCluster {
		w.startRound(ctx, batch, now, false)
		w.startRound(ctx, guarded, now, false)
		return
	}
	// A round's replies are seen once every node has answered, or at the
	// round's deadline (the earliest loss deadline among its holds): a frozen
	// node would hold back the confirmed renewals of holds on the others
	// until then, and one of them could be lost by that deadline. On a
	// Cluster each hash slot's holds renew in a round of their own; the
	// guarded ones, each slot's on a dedicated connection, at most
	// guardedGroups at a time per node.
	for _, b := range bySlot(batch) {
		w.startRound(ctx, b, now, false)
	}
	for _, b := range bySlot(guarded) {
		w.startRound(ctx, b, now, true)
	}
}

// startRound renews batch on a goroutine of its own (see renewDue);
// dedicated: it takes one of the Cluster's guardedGroups first.
func (w *watchdog) startRound(ctx context.Context, batch []*renewal, now time.Time, dedicated bool) {
	if len(batch) == 0 {
		return
	}
	w.rounds.Add(1)
	go func() {
		defer w.rounds.Done()
		if dedicated {
			places := w.places(batch[0].h.key)
			select {
			case places <- struct{}{}:
				defer func() { <-places }()
			case <-ctx.Done():
				// renewRound settles the batch.
			}
		}
		w.renewRound(ctx, batch, now)
	}()
}

// places is the dedicated places of the node serving key.
func (w *watchdog) places(key string) chan struct{} {
	node := ""
	if w.nodeOf != nil {
		node = w.nodeOf(key)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	ch := w.dedicated[node]
	if ch == nil {
		ch = make(chan struct{}, guardedGroups)
		w.dedicated[node] = ch
	}
	return ch
}

// bySlot splits batch by the hash slot of each hold's key, which every key
// of its renewal shares, in batch order.
func bySlot(batch []*renewal) [][]*renewal {
	var out [][]*renewal
	at := map[uint16]int{}
	for _, r := range batch {
		s := keySlot(r.h.key)
		i, seen := at[s]
		if !seen {
			i = len(out)
			at[s] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], r)
	}
	return out
}

// guardOf is the WAIT a renewal of r's hold needs, from the count of the
// primary serving its key (its shard's, on a Cluster); off without the guard.
func (w *watchdog) guardOf(r *renewal) guardWait {
	if cfg := r.h.prim.spec().cfg; cfg.guard && w.replicas != nil {
		var owner string
		if w.ownerID != nil {
			owner = w.ownerID(r.h.key) // before the count (replicasFor)
		}
		g := cfg.guardWait(w.replicas(r.h.key, cfg.guardReplicas))
		if g.on() {
			g.owner = owner
		}
		return g
	}
	return guardWait{}
}

// renewRound renews batch, taken from the schedule at now, and reschedules
// or reports each of its holds.
func (w *watchdog) renewRound(ctx context.Context, batch []*renewal, now time.Time) {
	// Each renewal sets its hold's lease as soon as it runs, shortening a
	// longer one: the loss deadlines move to it first (see
	// Client.renewalSent).
	for _, r := range batch {
		w.onSend(r.h, now)
	}
	// A renewal is worth waiting for only while the leases it renews last
	// (not just one renewal interval, which can be far shorter than a round
	// trip): past that, the holds' loss deadlines have ended them anyway.
	var deadline time.Time
	for i, r := range batch {
		if at := monoTime(r.h.lossAt.Load()); i == 0 || at.Before(deadline) {
			deadline = at
		}
	}
	if w.sendHook != nil {
		w.sendHook()
	}
	rctx, cancel := context.WithDeadline(ctx, deadline)
	replies := w.renewBatch(rctx, batch)
	cancel()
	for _, r := range batch {
		w.onDone(r.h)
	}
	if w.onUnknown != nil {
		for i, r := range batch {
			if err := replies[i].err; err != nil && unknownOutcome(err) && r.h.renewToken() == 0 {
				w.onUnknown(r.h, now)
			}
		}
	}
	if ctx.Err() != nil {
		w.mu.Lock()
		for _, r := range batch {
			w.settledLocked(r)
		}
		w.mu.Unlock()
		return
	}
	w.batches.Add(1)
	sent := now
	now = time.Now()
	var lost, renewed []*renewal
	var lostWhy []error // why each of lost is
	failed, ended := 0, 0
	w.mu.Lock()
	for i, r := range batch {
		w.settledLocked(r)
		if r.h.released() {
			ended++ // released, lost or closed during the round trip
			continue
		}
		switch rep := replies[i]; {
		case rep.err == nil && rep.held && rep.unacked:
			// The primary has the new lease but no replica does: a
			// failover now would promote one with the old expiry, so the
			// loss deadline stays where it was. Try again soon, before
			// that deadline: a renewal a replica acknowledges then moves
			// it on.
			failed++
			r.due = now.Add(retryWithin(renewEvery(r.h, r.every), now, monoTime(r.h.lossAt.Load())))
			heap.Push(&w.queue, r)
		case rep.err == nil && rep.held:
			// Back in the schedule once the deadline it set is armed
			// (below).
			w.renewals.Add(1)
			renewed = append(renewed, r)
			continue
		case (rep.err == nil || otherKind(rep.err)) && !r.h.releasing.Load():
			// Gone: another owner's, or a name another kind of lock took
			// (WRONGTYPE after a delete elsewhere), which no retry changes.
			lost = append(lost, r)
			why := errNotHeldOnServer
			if rep.err != nil {
				why = fmt.Errorf("%w: %w", errOtherKind, wrongKind(rep.err))
			}
			lostWhy = append(lostWhy, why)
		default:
			// A transient failure, or a lock its owner is releasing right
			// now (the release settles it): try again soon. The hold's loss
			// deadline ends it if no renewal is confirmed in time.
			failed++
			r.due = now.Add(retryWithin(renewEvery(r.h, r.every), now, monoTime(r.h.lossAt.Load())))
			heap.Push(&w.queue, r)
		}
		if r.soon {
			r.soon = false
			if r.index >= 0 {
				r.due = now
				heap.Fix(&w.queue, r.index)
			}
		}
	}
	w.mu.Unlock()
	if len(batch) > ended+len(lost)+len(renewed) {
		// Back in the schedule, which run may be waiting on without them.
		signal(w.kick)
	}
	if w.renewedHook != nil && len(renewed) > 0 {
		w.renewedHook()
	}
	for _, r := range renewed {
		w.onRenewed(r.h, sent)
	}
	w.requeue(renewed, sent)
	// Every lost hold ends before the Observer hears of any (HoldEnd, then
	// Renewal): its time is not the owners' time under a lock found gone.
	// The reports go to the reporter, in that order: a logger or Observer
	// that blocks must not hold up this goroutine, which on a Cluster keeps
	// one of the node's guarded places (see dedicated) until it returns.
	var reports []queuedReport
	for i, r := range lost {
		reports = w.onLost(r.h, lostWhy[i]).queued(reports)
	}
	if w.obs != nil {
		e := RenewalEvent{Batch: len(batch), Renewed: len(renewed), Lost: len(lost),
			Failed: failed, Ended: ended, Duration: now.Sub(sent)}
		reports = append(reports, queuedReport{f: func() { w.report(e) }, kind: reportRenewal})
	}
	if len(reports) > 0 {
		w.rep.add(reports...)
	}
}

// requeue puts holds whose renewal sent at sent was confirmed, and whose
// loss deadlines that renewal has moved on, back in the schedule. The lease
// it set counts from when it was sent, and so does the next renewal, due a
// renewal interval later (at once when the round trip took longer; a call
// of unknown outcome shortens the interval, see Client.leaseUnknown):
// counted from the reply, on a link whose round trip is a good part of the
// lease, the next reply came after the deadline this one set. And only once
// that deadline is armed: a round taking a hold due at once before would
// cut its renewal off at the deadline before, ending it as lost while the
// server renewed it.
func (w *watchdog) requeue(renewed []*renewal, sent time.Time) {
	if len(renewed) == 0 {
		return
	}
	w.mu.Lock()
	for _, r := range renewed {
		if r.h.released() {
			// Ended since its reply came: Client.end found it out of the
			// schedule with no renewal in flight, and removed nothing.
			r.soon = false
			continue
		}
		r.due = sent.Add(renewEvery(r.h, r.every))
		if r.soon {
			r.soon = false
			r.due = time.Now()
		}
		heap.Push(&w.queue, r)
	}
	w.mu.Unlock()
	signal(w.kick)
}

// retryWithin is how soon a renewal that failed is made again: a quarter
// of the renewal interval, at most a second, and at most half of what is
// left before the hold's loss deadline at. rueidis sends no renewal again on
// a new connection, so a renewal whose connection broke fails at once, and
// a guarded one no replica acknowledged in time leaves the deadline where
// it was; with an interval close to the lease, a quarter of it can fall
// past the loss deadline, and the hold would be lost though the server (or
// the replica) answers again at once.
func retryWithin(every time.Duration, now, at time.Time) time.Duration {
	d := min(every/4, time.Second)
	if left := at.Sub(now); left > 0 {
		d = min(d, max(left/2, retryLaterMin))
	}
	return d
}

// report calls the Observer's Renewal; a panic is logged, not let through
// (it would crash the process from the watchdog's goroutine).
func (w *watchdog) report(e RenewalEvent) {
	observerCall(w.log, "Renewal", func() { w.obs.Renewal(e) })
}

var errNotHeldOnServer = errors.New("renewal found the lock no longer held by this owner")

// errOtherKind: a renewal or Extend found the lock's name taken by another
// kind of lock.
var errOtherKind = errors.New("the lock's name is taken by another kind of lock")

// otherKind reports a reply by which the lock's key holds another kind of
// lock (WRONGTYPE, or a script's refusal of the other kind): this hold's
// key is gone, as when another owner took it.
func otherKind(err error) bool { return errors.Is(wrongKind(err), ErrWrongKind) }

// errNotHeldAtRelease: Unlock found the hold gone on the server.
var errNotHeldAtRelease = errors.New("release found the lock no longer held by this owner")

// errGrantedAfresh: the owner locked again and was granted the lock anew, so
// the server no longer had its earlier hold.
var errGrantedAfresh = errors.New("its owner was granted the lock afresh: the server no longer had this hold")

// renewBatch renews a batch. The holds not under the failover guard go out
// in one pipeline whatever their kinds (renewPlain), as one round trip:
// sent kind after kind, each kind after the reply to the one before, a
// round took a round trip per kind, and on a slow link the kinds sent last
// had their replies past their holds' loss deadlines. Holds under the
// guard, when the primary has replicas, are renewed apart, followed by
// WAIT (renewGuarded), and not after the others' replies either.
func (w *watchdog) renewBatch(ctx context.Context, batch []*renewal) []renewReply {
	replies := make([]renewReply, len(batch))
	var plain []int
	var guarded []int
	var waits []guardWait
	var timeout time.Duration
	// Every hold of a round is on one node (on a Cluster, a round is one
	// hash slot's: renewDue), so each kind is looked up once.
	var known map[*renewKind]bool
	node := ""
	if len(batch) > 0 {
		node = w.scriptNode(batch[0].h.key)
	}
	slow := w.slowFor(ctx, node)
	start := time.Now()
	defer func() { w.noteTrip(node, start, replies) }()
	for i, r := range batch {
		if g := w.guardOf(r); g.on() {
			guarded = append(guarded, i)
			waits = append(waits, g)
			timeout = max(timeout, g.timeout)
			continue
		}
		if k := kindOf(r); !hasKey(known, k) {
			if known == nil {
				known = map[*renewKind]bool{}
			}
			known[k] = !slow && w.hasScript(k, node)
		}
		plain = append(plain, i)
	}
	var done chan struct{}
	if len(guarded) > 0 {
		if len(plain) == 0 {
			w.renewGuarded(ctx, batch, guarded, waits, timeout, node, slow, replies)
			return replies
		}
		// Both in one round (the replica count changed since renewDue
		// split them): neither waits for the other's reply.
		done = make(chan struct{})
		go func() {
			defer close(done)
			w.renewGuarded(ctx, batch, guarded, waits, timeout, node, slow, replies)
		}()
	}
	if len(plain) > 0 {
		reps := w.each(ctx, len(plain), func(ctx context.Context, lo, hi int) []renewReply {
			return w.renewPlain(ctx, batch, plain[lo:hi], known, node)
		})
		for j, rep := range reps {
			replies[plain[j]] = rep
		}
	}
	if done != nil {
		<-done
	}
	return replies
}

func hasKey(m map[*renewKind]bool, k *renewKind) bool {
	_, ok := m[k]
	return ok
}

// renewPlain renews the holds of batch at idx, of any kinds, in one
// pipeline, and returns their replies in idx's order. A kind not in
// scripted (node has not answered a renewal of it, hasScript, or the link
// is slow, slowFor) goes as EVAL with the script's source: sent as EVALSHA, a renewal the server has no script for
// (the first one after a grant) is answered NOSCRIPT and sent again as
// EVAL, two round trips, and on a link whose round trip is over a third of
// the lease its reply came after the loss deadline the grant set. Once the
// node has answered one, the kind goes as EVALSHA there, without the
// source: a server that loses its scripts later (restarted, SCRIPT FLUSH, a
// failover to a replica behind the same address) answers NOSCRIPT, and
// those renewals alone go again as EVAL, which loads the script again (a
// Cluster failover names another node, whose first renewal goes as EVAL).
func (w *watchdog) renewPlain(ctx context.Context, batch []*renewal, idx []int, scripted map[*renewKind]bool, node string) []renewReply {
	out := make([]renewReply, len(idx))
	build := func(j int, eval bool) (rueidis.Completed, error) {
		r := batch[idx[j]]
		cmd, err := kindOf(r).command(w.rc, r.h)
		if err == nil && eval {
			cmd, err = generated.EvalOf(w.rc, cmd)
		}
		return cmd, err
	}
	cmds := make(rueidis.Commands, 0, len(idx))
	sent := make([]int, 0, len(idx))
	for j := range idx {
		cmd, err := build(j, !scripted[kindOf(batch[idx[j]])])
		if err != nil {
			out[j].err = err
			continue
		}
		cmds = append(cmds, cmd)
		sent = append(sent, j)
	}
	if len(cmds) == 0 {
		return out
	}
	var retry []int
	var answered []*renewKind // kinds sent as EVAL that node answered
	for n, resp := range w.rc.DoMulti(ctx, cmds...) {
		j := sent[n]
		k := kindOf(batch[idx[j]])
		if scripted[k] && noScript(resp) {
			retry = append(retry, j)
			continue
		}
		held, err := k.decode(resp)
		out[j] = renewReply{held: held, err: err}
		if err == nil && !scripted[k] && !slices.Contains(answered, k) {
			answered = append(answered, k)
		}
	}
	for _, k := range answered {
		w.answered(k, node)
	}
	if len(retry) == 0 {
		return out
	}
	// Built again: rueidis recycles a command once it is answered.
	evals := make(rueidis.Commands, 0, len(retry))
	sent = sent[:0]
	for _, j := range retry {
		cmd, err := build(j, true)
		if err != nil {
			out[j].err = err
			continue
		}
		evals = append(evals, cmd)
		sent = append(sent, j)
	}
	if len(evals) == 0 {
		return out
	}
	for n, resp := range w.rc.DoMulti(ctx, evals...) {
		j := sent[n]
		held, err := kindOf(batch[idx[j]]).decode(resp)
		out[j] = renewReply{held: held, err: err}
	}
	return out
}

// noScript reports a NOSCRIPT reply: the node has no script of that SHA-1.
func noScript(resp rueidis.RedisResult) bool {
	re, ok := rueidis.IsRedisErr(resp.Error())
	return ok && re.IsNoScript()
}

// slowFor reports whether renewals sent to node under ctx (the round's,
// whose deadline is its holds' earliest loss deadline) go as EVAL whatever
// the node has answered: when two round trips as long as its last
// (trips), with half of one more to spare, would not come back before
// that deadline. A server that lost its scripts since (a restart, SCRIPT
// FLUSH, a failover behind the same address) answers an EVALSHA NOSCRIPT,
// and the EVAL after it is the second round trip: on a link whose round
// trip is a good part of the lease, its reply came past the loss deadline
// and the hold was lost. Sent as EVAL, the renewal costs the script's
// source on the wire, and one round trip whatever the server has lost.
func (w *watchdog) slowFor(ctx context.Context, node string) bool {
	dl, ok := ctx.Deadline()
	if !ok {
		return false
	}
	w.scriptedMu.Lock()
	trip := w.trips[node]
	w.scriptedMu.Unlock()
	return trip > 0 && time.Until(dl) < trip*5/2
}

// noteTrip records for slowFor how long a round of renewals to node, sent
// from start, took until replies came, once one of them was answered (a
// round whose connection broke tells nothing of the link).
func (w *watchdog) noteTrip(node string, start time.Time, replies []renewReply) {
	for _, rep := range replies {
		if rep.err == nil {
			trip := time.Since(start)
			w.scriptedMu.Lock()
			if w.trips == nil {
				w.trips = map[string]time.Duration{}
			}
			w.trips[node] = trip
			w.scriptedMu.Unlock()
			return
		}
	}
}

// answered records that node has answered a renewal of kind k, so has its
// script (hasScript).
func (w *watchdog) answered(k *renewKind, node string) {
	w.scriptedMu.Lock()
	if w.scripted == nil {
		w.scripted = map[scriptedKey]bool{}
	}
	w.scripted[scriptedKey{k, node}] = true
	w.scriptedMu.Unlock()
}

// kindOf is the kind of r's renewal, mutexRenewal for a Mutex-shaped hold.
func kindOf(r *renewal) *renewKind {
	if r.kind == nil {
		return mutexRenewal
	}
	return r.kind
}

// scriptNode names the node serving key for scripted: the Cluster node
// serving it (nodeOf), its hash slot on a Cluster whose slot map was not
// read, "" elsewhere (one server, or the primary behind a Sentinel).
func (w *watchdog) scriptNode(key string) string {
	if w.nodeOf != nil {
		if n := w.nodeOf(key); n != "" {
			return n
		}
	}
	if w.rc.Mode() == rueidis.ClientModeCluster {
		return "slot:" + strconv.Itoa(int(keySlot(key)))
	}
	return ""
}

// hasScript reports whether node has answered a renewal of kind k, so has
// its script.
func (w *watchdog) hasScript(k *renewKind, node string) bool {
	w.scriptedMu.Lock()
	defer w.scriptedMu.Unlock()
	return w.scripted[scriptedKey{k, node}]
}

// renewGuarded renews the holds of batch at idx with WAIT after them on the
// same connection, so that a renewal not acknowledged by the replicas its
// wait in waits names (per hold, WithGuardReplicas) within timeout is
// reported as such (renewReply.unacked) and does not move the hold's loss
// deadline: a failover would promote a replica that has the old
// expiry, and the lock could be granted to another owner while this one's
// context still ran.
//
// A kind node has not answered a renewal of yet, or any kind on a slow link
// (slow, see slowFor), goes as EVAL with its script's source, as unguarded
// ones do (renewPlain): as EVALSHA to a node without the script, it was
// answered NOSCRIPT and sent again with a WAIT of its own, two round trips.
func (w *watchdog) renewGuarded(ctx context.Context, batch []*renewal, idx []int, waits []guardWait, timeout time.Duration, node string, slow bool, replies []renewReply) {
	calls := make([]guardedCall, len(idx))
	kinds := make([]*renewKind, len(idx))
	eval := map[*renewKind]bool{}
	for j, i := range idx {
		h, k := batch[i].h, kindOf(batch[i])
		kinds[j] = k
		asEval, seen := eval[k]
		if !seen {
			asEval = slow || !w.hasScript(k, node)
			eval[k] = asEval
		}
		build := func() (rueidis.Completed, error) { return k.command(w.rc, h) }
		if asEval {
			build = func() (rueidis.Completed, error) {
				cmd, err := k.command(w.rc, h)
				if err != nil {
					return cmd, err
				}
				return generated.EvalOf(w.rc, cmd)
			}
		}
		calls[j] = guardedCall{build: build, acks: waits[j].acks, want: waits[j].want, owner: waits[j].owner}
	}
	reps := make([]guardedReply, len(idx))
	// Only the calls that panicked have an error here (errRenewalPanicked).
	panicked := w.each(ctx, len(idx), func(ctx context.Context, lo, hi int) []renewReply {
		copy(reps[lo:hi], w.sendGuarded(ctx, timeout, calls[lo:hi]))
		return make([]renewReply, hi-lo)
	})
	for j, rep := range reps {
		if panicked[j].err != nil {
			replies[idx[j]] = panicked[j]
			continue
		}
		if rep.err != nil {
			replies[idx[j]] = renewReply{err: rep.err}
			continue
		}
		held, err := kinds[j].decode(rep.reply)
		replies[idx[j]] = renewReply{held: held, err: err, unacked: err == nil && held && !rep.acked}
		if err == nil && eval[kinds[j]] {
			w.answered(kinds[j], node)
		}
	}
}

// errRenewalPanicked is the error of a renewal whose call panicked (a
// client wrapper's, logged): a renewal that failed, made again soon.
var errRenewalPanicked = errors.New("scriptlock: the renewal's call panicked (a client wrapper's panic, logged)")

// errRenewalExited is what a renewal's call that ended its goroutine (a
// client wrapper's runtime.Goexit) is logged as, as a panic with it.
var errRenewalExited = errors.New("scriptlock: the renewal's call ended its goroutine (runtime.Goexit)")

// each runs renew, which sends the renewals lo..hi of a part of a round
// together and returns their replies, for all n of them. The round's
// goroutine serves every hold of the Client, and a panic of renew (a client
// wrapper's) has no caller to reach there: it is logged, and each renewal
// is made again alone, so that only those whose own call panics fail
// (errRenewalPanicked) and the others sharing their pipeline are renewed.
func (w *watchdog) each(ctx context.Context, n int, renew func(ctx context.Context, lo, hi int) []renewReply) []renewReply {
	if out, ok := w.unpanicked(ctx, func(ctx context.Context) []renewReply { return renew(ctx, 0, n) }); ok {
		if w.panics.Load() != 0 {
			w.panicMu.Lock()
			w.panics.Store(0) // the next panic is news again
			clear(w.panicSeen)
			w.panicMu.Unlock()
		}
		return out
	}
	out := make([]renewReply, n)
	for i := range out {
		out[i] = renewReply{err: errRenewalPanicked}
		if n == 1 {
			break // made alone already
		}
		if r, ok := w.unpanicked(ctx, func(ctx context.Context) []renewReply { return renew(ctx, i, i+1) }); ok {
			out[i] = r[0]
		}
	}
	return out
}

// renewingLocks is what a panic logged in a watchdog round was in.
const renewingLocks = "renewing locks"

// panicKinds bounds the kinds of panic (by type and text) logged at ERROR
// between two rounds whose renewals went through: a wrapper whose panic
// names the key, or a count, still logs a bounded number.
const panicKinds = 8

// panicKind is what tells one panic from another for the log: its type and
// text.
func panicKind(v any) string { return fmt.Sprintf("%T %v", v, v) }

// newPanic counts a renewal's panic of value v and reports n, the panics
// since renewals last went through, and whether v is news: the first of
// its kind since then (up to panicKinds of them).
func (w *watchdog) newPanic(v any) (n int64, news bool) {
	kind := panicKind(v)
	w.panicMu.Lock()
	defer w.panicMu.Unlock()
	n = w.panics.Add(1)
	if w.panicSeen[kind] || len(w.panicSeen) >= panicKinds {
		return n, false
	}
	if w.panicSeen == nil {
		w.panicSeen = map[string]bool{}
	}
	w.panicSeen[kind] = true
	return n, true
}

// unpanicked runs f with ctx, reporting false when it panicked; the panic
// is logged by the reporter (a log sink that stalls must not hold up the
// renewals): at ERROR, with the stack of the wrapper's panic where it was
// first recovered (a guarded renewal's goroutine, keepPanicStack), else
// this one, when it is the first of its kind since renewals went through
// (newPanic); at DEBUG after that.
// f runs on a goroutine of its own, which the round waits for: a Goexit of
// f (a client wrapper's, which nothing stops) ends that one, and is taken
// as a panic. On the round's own goroutine it ended the round with its
// renewals neither settled nor scheduled again: those holds were lost at
// their leases' end.
func (w *watchdog) unpanicked(ctx context.Context, f func(context.Context) []renewReply) (out []renewReply, ok bool) {
	ctx, kept := withPanicStack(ctx)
	v, here, panicked, exited := catchOwn(func() { out = f(ctx) })
	if !panicked && !exited {
		return out, true
	}
	if exited {
		v = errRenewalExited
	}
	var record func()
	if n, news := w.newPanic(v); news {
		stack := kept.of(v, func() []byte { return []byte(here) })
		record = func() { w.log.Error("panic recovered", "in", renewingLocks, "panic", v, "stack", stack) }
	} else {
		record = func() { w.log.Debug("panic recovered again", "in", renewingLocks, "panic", v, "panics", n) }
	}
	if w.rep != nil {
		w.rep.logLater(record)
	} else {
		record()
	}
	return nil, false
}

type renewHeap []*renewal

func (q renewHeap) Len() int           { return len(q) }
func (q renewHeap) Less(i, j int) bool { return q[i].due.Before(q[j].due) }
func (q renewHeap) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}
func (q *renewHeap) Push(x any) {
	r := x.(*renewal)
	r.index = len(*q)
	*q = append(*q, r)
}
func (q *renewHeap) Pop() any {
	old := *q
	r := old[len(old)-1]
	old[len(old)-1] = nil
	r.index = -1
	*q = old[:len(old)-1]
	return r
}
