package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
)

// extender is a primitive whose explicit-lease holds can be extended.
type extender interface {
	// extendOnce sets the lease of field's hold to lease from now; held is
	// false when field no longer holds the lock, or holds it by a hold
	// other than the one token names (see hold.renewToken; 0: any). With
	// guard on, WAIT follows the script on its connection, and acked
	// reports whether guard.acks replicas acknowledged it (always true
	// unguarded).
	extendOnce(ctx context.Context, field string, lease time.Duration, token int64, guard guardWait) (held, acked bool, err error)
}

// extendOnce: an Extend that brings the expiry forward announces it with
// Redisson's "0", so that Redisson waiters sleeping on the longer TTL they
// read call again (MutexExtend), the head of Redisson's fair queue too. Go waiters sleep at most a third of the
// waiter timeout between calls and need no word.
func (m *Mutex) extendOnce(ctx context.Context, field string, lease time.Duration, token int64, guard guardWait) (bool, bool, error) {
	return m.extendQueued(ctx, field, lease, token, guard)
}

// extendQueued is extendOnce; floor, when given, is the clock and
// threadWaitTime (ms) of a FairMutex on Redisson's queue, the floor of the
// queued scores a shorter lease moves (see MutexExtend). A Mutex sends none.
func (m *Mutex) extendQueued(ctx context.Context, field string, lease time.Duration, token int64, guard guardWait, floor ...string) (bool, bool, error) {
	queue, timeouts := fairKeys(m.key, true)
	type reply struct{ held, acked bool }
	r, err := publishingAgain(m.c, func(publish string, again bool) (reply, error) {
		if guard.on() {
			held, acked, err := m.c.callGuarded(ctx, guard, func() (rueidis.Completed, error) {
				return generated.MutexExtendCommand(m.c.rc, m.key, m.fence, m.channel, queue, timeouts, lease, field, token, publish, again, floor...)
			}, generated.DecodeMutexExtend)
			return reply{held, acked}, err
		}
		held, err := generated.MutexExtend(ctx, m.c.rc, m.key, m.fence, m.channel, queue, timeouts, lease, field, token, publish, again, floor...)
		return reply{held, true}, err
	})
	return r.held, r.acked, err
}

// extendOnce: on Redisson's queue, the scores a shorter lease moves stop at
// the head's deadline under it, now + lease + threadWaitTime by the
// handle's clock and threadWaitTime, as Redisson computes them.
func (f *FairMutex) extendOnce(ctx context.Context, field string, lease time.Duration, token int64, guard guardWait) (bool, bool, error) {
	if f.threadWait > 0 {
		return f.m.extendQueued(ctx, field, lease, token, guard,
			strconv.FormatInt(time.Now().UnixMilli(), 10), leaseMs(f.threadWait)) // ms, rounded up as queueWait is sent
	}
	return f.m.extendOnce(ctx, field, lease, token, guard)
}

// extendOnce: an Extend that brings the lock's expiry forward publishes "1"
// on the lock's channel (RwWriteRenew, RwReadExtend), as a read release that
// does so.
func (s *rwSide) extendOnce(ctx context.Context, field string, lease time.Duration, token int64, guard guardWait) (bool, bool, error) {
	rw := s.rw
	type reply struct{ held, acked bool }
	r, err := publishingAgain(rw.c, func(publish string, again bool) (reply, error) {
		var command func() (rueidis.Completed, error)
		var decode func(rueidis.RedisResult) (bool, error)
		if s.write {
			reader := strings.TrimSuffix(field, ":write")
			command = func() (rueidis.Completed, error) {
				return generated.RwWriteRenewCommand(rw.c.rc, rw.key, rwTimeouts(rw.key, reader), rw.fence, rw.channel, lease, field, reader, token, publish, true, again)
			}
			decode = generated.DecodeRwWriteRenew
		} else {
			command = func() (rueidis.Completed, error) {
				return generated.RwReadExtendCommand(rw.c.rc, rw.key, rwTimeouts(rw.key, field), rw.prefix, rw.channel, lease, field, token, publish, again)
			}
			decode = generated.DecodeRwReadExtend
		}
		if guard.on() {
			held, acked, err := rw.c.callGuarded(ctx, guard, command, decode)
			return reply{held, acked}, err
		}
		var held bool
		var err error
		if s.write {
			reader := strings.TrimSuffix(field, ":write")
			held, err = generated.RwWriteRenew(ctx, rw.c.rc, rw.key, rwTimeouts(rw.key, reader), rw.fence, rw.channel, lease, field, reader, token, publish, true, again)
		} else {
			held, err = generated.RwReadExtend(ctx, rw.c.rc, rw.key, rwTimeouts(rw.key, field), rw.prefix, rw.channel, lease, field, token, publish, again)
		}
		return reply{held, true}, err
	})
	return r.held, r.acked, err
}

// errWatchdogHold: Extend of a hold the watchdog renews.
var errWatchdogHold = errors.New("the watchdog renews this hold (it was taken without a lease); Extend applies to holds taken with an explicit lease")

// extend sets the remaining lease of the explicit-lease hold that lctx names
// to lease, counted from now on the server, and moves the hold's loss
// deadline with it. A hold that is gone ends (its contexts with ErrLockLost)
// and the error is ErrNotHeld. The call is bounded by ctx.
func (c *Client) extend(ctx, lctx context.Context, p primitive, lease time.Duration) error {
	s := p.spec()
	if ctx == nil || lctx == nil {
		return opError("extend", s.name, invalidf("nil context"))
	}
	if c.closed() {
		return opError("extend", s.name, ErrClosed)
	}
	h, field, err := c.extendTarget(lctx, p, lease)
	if err != nil {
		return opError("extend", s.name, err)
	}
	if err := ctx.Err(); err != nil {
		// Nothing would be sent (rueidis refuses a call whose context has
		// ended): the hold and its deadline are left as they are.
		return opError("extend", s.name, err)
	}
	start := time.Now()
	at := lossDeadline(start, lease)
	// The deadline before the call, put back should the script refuse
	// before it writes (NO_PUBLISH).
	h.mu.Lock()
	prevLoss, prevReads := h.lossAt.Load(), slices.Clone(h.reads)
	h.mu.Unlock()
	// A shorter lease is in force on the server as soon as the script runs,
	// before its reply is back: the hold must not outlive it meanwhile.
	mark := c.leaseCall(h, at)
	// The script names the hold (its token, see hold.renewToken) and
	// leaves a newer hold of the owner alone, however late it runs.
	token := h.renewToken()
	done := func() {}
	if token == 0 {
		done = c.extendSent(h, field, at)
	}
	// With the failover guard, a replica must acknowledge the new lease
	// before the loss deadline moves to it (see below).
	guard := c.guarded(ctx, s.cfg, s.key)
	// An attempt made again after one of unknown outcome (its connection
	// broke under it) leaves the outcome unknown even when the repeat is
	// answered: the first may still run after it, and after calls sent
	// since.
	unsure := false
	if guard.on() {
		guard.hold, guard.unsure = h, &unsure
	}
	held, acked, err := func() (held, acked bool, err error) {
		defer mark.end() // also when the call panics (see acquire)
		defer done()
		// Recorded before the mark ends, so no call sent after it counts
		// as alone (see leaseUnknown); also when the call panics.
		unknown := true
		defer func() {
			if unknown {
				c.leaseUnknown(h, lease, at)
				if token == 0 {
					c.unknownSent(h, holdID(h.key, field), lease, at)
				}
			}
		}()
		// A refusal by which Redis ran nothing (retryLater: LOADING, BUSY,
		// MISCONF, a failover's READONLY, ...) is made again within ctx,
		// as a Lock's or an Unlock's, while the hold lasts: the lease set
		// counts from when the script runs, and the loss deadline from
		// before the first attempt.
		rt := newRetrier()
		repeats := 0
		for {
			// A context ended before the attempt: rueidis sends nothing
			// (nor does the guard), so no script of it can run later.
			ended := ctx.Err() != nil
			held, acked, err = p.(extender).extendOnce(ctx, field, lease, token, guard)
			// One whose connection broke under it is made again while the
			// hold lasts, at most guardedRepeats times in all (a guarded
			// one is by callGuarded): the scripts are not retryable, so
			// that rueidis sends none again after the hold ended (an Unlock
			// that failed gave the lock up). So is one another call's
			// deadline broke the connection under (foreignDeadline).
			if err != nil && !guard.on() && (brokenConn(err) || foreignDeadline(ctx, err)) && !errors.Is(err, errGuardStalled) &&
				!h.released() && ctx.Err() == nil && repeats < guardedRepeats-1 {
				repeats++
				unsure = true
				continue
			}
			if err == nil || h.released() || !rt.again(ctx, err, time.Time{}) {
				// Answered (a refusal by which Redis ran nothing, such as
				// NO_PUBLISH or LOADING, included), or never sent: its
				// outcome is known, and it bounds no later call, unless
				// an attempt before it was of unknown outcome.
				unknown = unsure || err != nil && !ended && unknownOutcome(err)
				err = rt.failed(ctx, err)
				return held, acked, err
			}
		}
	}()
	gone := func(why error) {
		// Counted as a loss timer's run, so that Close waits for the end
		// reported (once Close has ended every hold, h is ended already),
		// and counted out however the end unwinds (an Observer's HoldEnd
		// that ends its goroutine, a logger that panics).
		if !h.releasing.Load() && c.timerStart() {
			func() {
				defer c.timerDone()
				c.lost(h, why) // logged, as a loss the watchdog finds
			}()
		}
		// Else the owner's Unlock of its last hold is under way and may be
		// what removed it (as for a watchdog renewal): that Unlock ends the
		// hold, as released or, should it find the lock gone, as lost.
	}
	switch {
	case err != nil && otherKind(err):
		// The name is another kind of lock's (the key was deleted
		// elsewhere and taken): the hold is gone, as when another owner
		// took it, whatever Extend is made again.
		err = wrongKind(err)
		gone(fmt.Errorf("%w: %w", errOtherKind, err))
		return opError("extend", s.name, fmt.Errorf("%w: %w", ErrNotHeld, err))
	case errors.Is(err, generated.ErrNoPublish):
		// Refused before it wrote (the ACL user may not publish the message
		// a shorter lease sends): the lease on the server is as it was, and
		// so is the hold's deadline, moved earlier as the call was sent
		// (leaseCall) and put back here, unless another call that sets the
		// lease overlapped this one (its own deadline stands).
		h.mu.Lock()
		if mark.soloOn(h) && prevLoss != 0 {
			c.setLossLocked(h, monoTime(prevLoss), false, false)
			if prevReads != nil && len(prevReads) == len(h.reads) {
				copy(h.reads, prevReads)
			}
		}
		h.mu.Unlock()
		return opError("extend", s.name, err)
	case err != nil && (brokenConn(err) || foreignDeadline(ctx, err)) && h.released():
		// Not made again: the hold ended while the call was in flight,
		// which is what the caller is told, as below.
		return opError("extend", s.name, fmt.Errorf("%w (%w)", endedInFlight(h), err))
	case err != nil:
		// The script may have run, or may still run (see leaseUnknown):
		// the hold's deadline was moved within its lease.
		return opError("extend", s.name, wrongKind(err))
	case !held:
		gone(errNotHeldOnServer)
		return opError("extend", s.name, ErrNotHeld)
	case !acked:
		// The primary has the new lease but no replica does: a failover now
		// would promote one with the old expiry, and another owner could be
		// granted the lock at its old end. The deadline stays (a shorter
		// lease has moved it earlier already), as does the hold's lease.
		return opError("extend", s.name, c.guardFailed(guard, "the hold keeps its earlier deadline"))
	}
	c.mu.Lock()
	if h.released() {
		// The hold ended while the call was in flight (its loss deadline
		// passed first, or it was released or force-unlocked): its context
		// is over and its lock given back, so the new lease is nobody's.
		c.mu.Unlock()
		return opError("extend", s.name, endedInFlight(h))
	}
	// A re-entry without a lease meanwhile has handed the hold to the
	// watchdog, which now keeps its lease.
	if !h.renewing {
		// Re-entrant releases re-arm the lock with the hold's lease.
		h.lease = lease
		// Under c.mu: ordered with a re-entry's hand-over. Should another
		// Extend or re-entry overlap this one, the server may have run it
		// last, with a shorter lease: the deadline then only moves earlier.
		c.armReply(h, mark, start, at, false)
	} else if lease < h.lease {
		// It may have run on the server after that re-entry, and set a
		// lease the watchdog's first renewal would not reach in time
		// (its loss deadline moved to it as it was sent): renew now.
		defer c.renewSoon(h) // after c.mu: lock order c.mu, h.mu
	}
	c.mu.Unlock()
	return nil
}

// unknownKeep is how long an Extend or renewal of unknown outcome whose
// script names the owner bounds the owner's next holds (unknownSent): a
// script that lands later than that (its server stalled as long) is not
// provided for.
const unknownKeep = time.Minute

// unknownExtend is the shortest lease of the Extends of unknown outcome of
// one owner's holds, and until when it bounds the owner's next holds.
type unknownExtend struct {
	lease time.Duration
	until time.Time
}

// unsentAt is a record of unsent as made (its id and until then), in
// Client.unsentOrder: oldest first, as until grows with each record.
type unsentAt struct {
	id    holdKey
	until time.Time
}

// unsentPrune is how many records run out a call that takes c.mu (a record,
// a grant) removes at most: the work of a round of many holds' records is
// spread over the calls after their minute, not done by one of them while
// every Lock and Unlock waits.
const unsentPrune = 8

// unknownSent records an Extend or watchdog renewal of h with lease, of
// unknown outcome (its loss deadline at, from its sending), whose script
// names the owner's field id, not the hold (a hold without a token: see
// hold.renewToken): it may run after h has ended, on a hold the owner takes
// since, and set its lease there. Such a hold registered within unknownKeep
// counts with that lease as one of its own Extends of unknown outcome (see
// grant, leaseUnknown); so does one registered while the call was in flight,
// which its bound alone (extending, the watchdog's orphans) left free to
// move past that lease once the call was over.
func (c *Client) unknownSent(h *hold, id holdKey, lease time.Duration, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now() // under c.mu: unsentOrder stays in order
	c.pruneUnsentLocked(now)
	if c.unsent == nil {
		c.unsent = map[holdKey]unknownExtend{}
	}
	u, ok := c.unsent[id]
	// A record run out, not yet removed (a few go at a time), bounds
	// nothing: its shorter lease is not carried on.
	if !ok || !now.Before(u.until) || lease < u.lease {
		u.lease = lease
	}
	u.until = c.unknownKept(now)
	c.unsent[id] = u
	c.unsentOrder = append(c.unsentOrder, unsentAt{id, u.until})
	if next := c.holds[id]; next != nil && next != h {
		c.leaseUnknown(next, lease, at) // lock order: c.mu before h.mu
	}
}

// unknownKept is until when a record made at now bounds the owner's holds.
func (c *Client) unknownKept(now time.Time) time.Time {
	if c.unknownKeepFor > 0 {
		return now.Add(c.unknownKeepFor)
	}
	return now.Add(unknownKeep)
}

// pruneUnsentLocked removes up to unsentPrune records of unsent run out by
// now, oldest first: each owner's record goes a minute after its last call,
// whether or not the owner locks again (an owner per request never does);
// c.mu held.
func (c *Client) pruneUnsentLocked(now time.Time) {
	for n := 0; n < unsentPrune && len(c.unsentOrder) > 0 && !now.Before(c.unsentOrder[0].until); n++ {
		e := c.unsentOrder[0]
		c.unsentOrder[0] = unsentAt{}
		c.unsentOrder = c.unsentOrder[1:]
		if u, ok := c.unsent[e.id]; ok && u.until.Equal(e.until) {
			delete(c.unsent, e.id) // not recorded again since
		}
	}
	if len(c.unsentOrder) == 0 {
		c.unsentOrder, c.unsent = nil, nil // their arrays too
	}
}

// unknownOf is the lease of an Extend of unknown outcome that may still set
// the lease of a hold of id registered now (0: none); c.mu held.
func (c *Client) unknownOf(id holdKey) time.Duration {
	if len(c.unsent) == 0 {
		return 0
	}
	now := time.Now()
	c.pruneUnsentLocked(now)
	u, ok := c.unsent[id]
	if !ok || !now.Before(u.until) {
		return 0
	}
	return u.lease
}

// endedInFlight is the error of an Extend whose hold h ended while the
// call was in flight.
func endedInFlight(h *hold) error {
	h.mu.Lock()
	cause := h.cause // nil while end is still recording it
	h.mu.Unlock()
	if cause == nil || errors.Is(cause, context.Canceled) {
		return fmt.Errorf("%w: the hold ended while Extend was in flight", ErrNotHeld)
	}
	return fmt.Errorf("%w: the hold ended while Extend was in flight: %w", ErrNotHeld, cause)
}

// extendsInFlight counts the Extends in flight on one hold key and keeps the
// earliest loss deadline they set (monoNanos) until the last of them ends.
type extendsInFlight struct {
	n  int
	at int64
}

// extendSent registers an Extend of h, whose loss deadline is at, as sent, and
// returns the function that marks it ended. The script of a hold without a
// token (see hold.renewToken) names the owner's field, not the hold: should h be
// released and the owner lock again before it runs, it sets the new hold's
// lease. A hold of the owner registered since h moves its deadline to at now
// if that is earlier, and one registered while the Extend is in flight takes
// at as a bound (see grant).
func (c *Client) extendSent(h *hold, field string, at time.Time) func() {
	return c.boundSent(holdID(h.key, field), h, at)
}

// boundSent registers a call in flight that may set the lease of whichever
// hold of id's owner it finds on the server (loss deadline at), and returns
// the function that marks it ended: a hold of the owner registered here,
// other than h, moves its deadline to at now if that is earlier, and one
// registered while the call is in flight takes at as a bound (see grant).
func (c *Client) boundSent(id holdKey, h *hold, at time.Time) func() {
	c.mu.Lock()
	if c.extending == nil {
		c.extending = map[holdKey]extendsInFlight{}
	}
	e := c.extending[id]
	if e.n == 0 || monoNanos(at) < e.at {
		e.at = monoNanos(at)
	}
	e.n++
	c.extending[id] = e
	if next := c.holds[id]; next != nil && next != h {
		c.armEarlier(next, at) // lock order: c.mu before h.mu
	}
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		if e := c.extending[id]; e.n <= 1 {
			delete(c.extending, id)
		} else {
			e.n--
			c.extending[id] = e
		}
		c.mu.Unlock()
	}
}

// extendTarget finds the hold Extend would extend: the one lctx names (a lock
// context's own hold, or the current hold of an owner lctx only names). It
// refuses, without a
// call to Redis, a lease within the clock-drift allowance (ErrInvalidArgument), a context that
// names no owner or a hold that is gone (ErrNotHeld), and a hold the
// watchdog renews (ErrInvalidArgument).
func (c *Client) extendTarget(lctx context.Context, p primitive, lease time.Duration) (*hold, string, error) {
	if err := checkLease(lease); err != nil {
		return nil, "", err
	}
	h, field, ok := c.holdOf(lctx, p)
	if !ok {
		return nil, "", fmt.Errorf("%w (the context names no owner: pass the context Lock returned)", ErrNotHeld)
	}
	if err := checkOwner(lctx, p); err != nil {
		return nil, "", err
	}
	// Only the hold lctx names: a lock context of an ended hold extends
	// nothing, not a hold its owner (shared through its context) took since,
	// whose lease its own context keeps, and which a RedLock would count
	// toward its quorum.
	if h == nil || h.released() || ofOtherKind(h, p) {
		return nil, "", ErrNotHeld
	}
	c.mu.Lock()
	renewing := h.renewing
	c.mu.Unlock()
	if renewing {
		return nil, "", fmt.Errorf("%w: %w", ErrInvalidArgument, errWatchdogHold)
	}
	return h, field, nil
}

// extendChecker is implemented by this package's Extenders: it reports, with
// no call to Redis, an Extend of lctx's hold that would be refused as an
// invalid argument (a lease out of range, a hold the watchdog renews), so a
// MultiLock refuses before it extends any member.
type extendChecker interface {
	extendCheck(lctx context.Context, lease time.Duration) error
}

// checkExtend keeps what extendTarget finds invalid; a hold that is gone is
// Extend's to report, as a loss.
func (c *Client) checkExtend(lctx context.Context, p primitive, lease time.Duration) error {
	if _, _, err := c.extendTarget(lctx, p, lease); errors.Is(err, ErrInvalidArgument) {
		return opError("extend", p.spec().name, err)
	}
	return nil
}

func (m *Mutex) extendCheck(lctx context.Context, lease time.Duration) error {
	return m.c.checkExtend(lctx, m, lease)
}

func (f *FairMutex) extendCheck(lctx context.Context, lease time.Duration) error {
	return f.m.c.checkExtend(lctx, f, lease)
}

func (l *LeanMutex) extendCheck(lctx context.Context, lease time.Duration) error {
	return l.c.checkExtend(lctx, l, lease)
}

func (rw *RWMutex) extendCheck(lctx context.Context, lease time.Duration) error {
	return rw.c.checkExtend(lctx, rw.extendSide(lctx), lease)
}

func (r readLocker) extendCheck(lctx context.Context, lease time.Duration) error {
	return r.rw.c.checkExtend(lctx, &r.rw.read, lease)
}

// Extend sets the remaining lease of the hold lctx names (the context Lock
// returned, or one carrying its owner) to lease, counted from now, on the
// server, and moves the moment its lock context ends accordingly. It is for
// holds taken with an explicit lease (LockWithLease, TryLockWithLease, or
// WithLease): a hold the watchdog renews is refused with ErrInvalidArgument.
// A hold that is gone (expired, deleted, taken over) ends its lock context
// with ErrLockLost and Extend returns ErrNotHeld; so does a lock context of
// a hold that has ended, even when its owner holds the lock again (that newer
// hold is left alone), and an Extend whose hold ended (its loss deadline
// passed, or it was released) while the call was in flight, one whose
// connection broke under it then included. The call is bounded by
// ctx, and one whose connection broke is made again within it (under the
// failover guard too), as is one Redis refused having run nothing (LOADING,
// BUSY, MISCONF, ...), while the hold lasts; when it fails without an answer
// (or is answered only when made again after its connection broke), the lock context
// ends no later than lease from now, in case the server applied a shorter
// lease, and since its script may still run later, after calls sent since,
// no later Extend or renewal of the hold moves the end of its context
// further than that lease from its own sending. One whose ctx has already
// ended sends nothing and changes nothing.
func (m *Mutex) Extend(ctx, lctx context.Context, lease time.Duration) error {
	return m.c.extend(ctx, lctx, m, lease)
}

// Extend sets the remaining lease of the explicit-lease hold lctx names, as
// Mutex.Extend.
func (f *FairMutex) Extend(ctx, lctx context.Context, lease time.Duration) error {
	return f.m.c.extend(ctx, lctx, f, lease)
}

// Extend sets the remaining lease of the explicit-lease hold lctx names, as
// Mutex.Extend. The side is lctx's: a read lock context extends the owner's
// read holds (their lease keys, and the lock's expiry follows the longest
// read lease left), a write lock context the write hold. Given a context that
// only names an owner (WithOwner), Extend extends that owner's write hold if
// it has one, else its read holds.
func (rw *RWMutex) Extend(ctx, lctx context.Context, lease time.Duration) error {
	return rw.c.extend(ctx, lctx, rw.extendSide(lctx), lease)
}

// extendSide is the side Extend extends for lctx.
func (rw *RWMutex) extendSide(lctx context.Context) *rwSide {
	side := &rw.write
	if lctx != nil {
		lc, _ := lctx.Value(lockCtxKey{}).(*lockCtx)
		switch {
		case lc != nil && lc.hold != nil && lc.hold.key == rw.key:
			if lc.hold.side == sideRead {
				side = &rw.read
			}
		default:
			if h, _, ok := rw.c.holdOf(lctx, &rw.write); ok && (h == nil || h.released()) {
				side = &rw.read
			}
		}
	}
	return side
}

// RExtend extends the owner's read holds, as Extend with a read lock context.
func (rw *RWMutex) RExtend(ctx, lctx context.Context, lease time.Duration) error {
	return rw.c.extend(ctx, lctx, &rw.read, lease)
}

// Extend of RLocker's Locker extends read holds.
func (r readLocker) Extend(ctx, lctx context.Context, lease time.Duration) error {
	return r.rw.RExtend(ctx, lctx, lease)
}

// Extender is a Locker whose explicit-lease holds can be given a new lease:
// Mutex, FairMutex, LeanMutex, RWMutex (and its RLocker), MultiLock, RedLock.
type Extender interface {
	Locker
	// Extend gives the hold lctx names (taken with an explicit lease) a new
	// lease, counted from now, and moves the end of lctx with it: ErrNotHeld
	// when the hold is gone, ErrInvalidArgument for a hold the watchdog
	// renews. See Mutex.Extend.
	Extend(ctx, lctx context.Context, lease time.Duration) error
}

var (
	_ Extender = (*Mutex)(nil)
	_ Extender = (*FairMutex)(nil)
	_ Extender = (*RWMutex)(nil)
	_ Extender = readLocker{}
	_ Extender = (*MultiLock)(nil)
	_ Extender = (*RedLock)(nil)
	_ Extender = (*LeanMutex)(nil)

	_ extendChecker = (*Mutex)(nil)
	_ extendChecker = (*FairMutex)(nil)
	_ extendChecker = (*RWMutex)(nil)
	_ extendChecker = readLocker{}
	_ extendChecker = (*MultiLock)(nil)
	_ extendChecker = (*RedLock)(nil)
	_ extendChecker = (*LeanMutex)(nil)
)

// Extend gives every member's hold lease from now (each with Extend), in
// parallel. Every member must be an Extender holding with an explicit lease.
// A member that would refuse the call as invalid (held by the watchdog, a
// lease out of its range) is found before any member is extended: the error
// is ErrInvalidArgument and no lease changes. When some member fails at the
// server, the others keep their new lease and the error names the failures
// (errors.Join); a member that is gone ends the MultiLock's context as a
// loss does.
func (m *MultiLock) Extend(ctx, lctx context.Context, lease time.Duration) error {
	if ctx == nil || lctx == nil {
		return fmt.Errorf("scriptlock: extend %s: %w", m.name, invalidf("nil context"))
	}
	if err := m.extendCheck(lctx, lease); err != nil {
		return fmt.Errorf("scriptlock: extend %s: %w", m.name, err)
	}
	exts := make([]Extender, len(m.locks))
	for i, l := range m.locks {
		exts[i] = l.(Extender) // extendCheck refused any other
	}
	mh, _ := lctx.Value(m.key).(*multiHeld)
	errs := make([]error, len(m.locks))
	var caught firstPanic
	done := make(chan struct{})
	for i, e := range exts {
		mctx := lctx
		if mh != nil {
			mctx = mh.ctxs[i]
		}
		go func() {
			defer func() { done <- struct{}{} }()
			caught.run(func() { // goes on on the caller's goroutine
				errs[i] = nested(e.Extend(ctx, mctx, lease))
			})
		}()
	}
	for range exts {
		<-done
	}
	if caught.set {
		// A member's Extend panicked: every member's Extend has run.
		caught.goOn()
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("scriptlock: extend %s: %w", m.name, err)
	}
	return nil
}

// extendCheck checks every member that can tell (this package's Extenders)
// before any is extended: a member Extend would refuse as an invalid
// argument refuses the whole call, and nothing changes. So does a member
// that is no Extender: its refusal would come after the members before it
// were extended.
func (m *MultiLock) extendCheck(lctx context.Context, lease time.Duration) error {
	mh, _ := lctx.Value(m.key).(*multiHeld)
	var errs []error
	for i, l := range m.locks {
		if _, ok := l.(Extender); !ok {
			errs = append(errs, invalidf("member %q (%T) cannot be extended", l.Name(), l))
			continue
		}
		ec, ok := l.(extendChecker)
		if !ok {
			continue
		}
		mctx := lctx
		if mh != nil {
			mctx = mh.ctxs[i]
		}
		if err := ec.extendCheck(mctx, lease); err != nil {
			errs = append(errs, nested(err))
		}
	}
	return errors.Join(errs...)
}

// nodeErrors formats per-node errors for a RedLock error.
func nodeErrors(errs []error) error {
	var out []error
	for i, err := range errs {
		if err != nil {
			out = append(out, fmt.Errorf("node %d: %w", i, nested(err)))
		}
	}
	return errors.Join(out...)
}
