package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
)

// The engine: one hold lifecycle for every lock primitive. A primitive
// supplies its script calls and their decoding (the primitive interface); the
// engine owns everything else, each in one place:
//
//   - acquire: owner, the bounded acquiring call, the failover guard, undoing
//     an acquisition whose outcome is unknown, notified waiting;
//   - grant: the hold registry, lease choice, renewal, the loss deadline;
//   - unlock: release retry with a latch, the failure policy;
//   - finish: the end of a hold and its lock contexts, with a cause.

// lockSpec is what every lock handle shares: its identity and settings.
type lockSpec struct {
	c       *Client
	name    string
	key     string
	channel string  // release notifications (per-waiter channels derive from it)
	fence   string  // fencing-token counter
	latch   string  // release latch keys: <latch>:<client-id>:<n>
	cfg     *config // shared with the Client, or the handle's own with options
}

func (s *lockSpec) check(ctx context.Context) error {
	if ctx == nil {
		return invalidf("nil context")
	}
	if s.c.closed() {
		return ErrClosed
	}
	return nil
}

// serverLease is the lease an acquisition sets on the server: the explicit
// lease, or the watchdog's.
func (s *lockSpec) serverLease(lease time.Duration) time.Duration {
	if lease > 0 {
		return lease
	}
	return s.cfg.watchdogLease
}

// checkLease refuses an explicit lease no hold can use: one within the
// clock-drift allowance (lossMargin, 5ms + 2%) ends its hold's context as
// it is granted, and one under 1ms would reach Redis, which counts whole
// milliseconds, as 0 (refused, or a key deleted as soon as it is written).
func checkLease(lease time.Duration) error {
	if m := lossMargin(lease); lease <= m {
		return invalidf("lease %s is within the clock-drift allowance of %s: the hold would end as it is granted", lease, m)
	}
	if lease > MaxLease {
		return invalidf("lease %s is longer than MaxLease (%s)", lease, MaxLease)
	}
	return nil
}

// MaxLease is the longest lease a lock takes, 2^42 - 1 ms (about 139
// years): a refused attempt's reply packs flags above the holder's time
// left from 2^42 ms up, so a longer lease would read as those flags.
const MaxLease = (1<<42 - 1) * time.Millisecond

// primitive is what a lock supplies to the engine.
type primitive interface {
	spec() *lockSpec
	side() side
	// fieldSuffix follows <client-id>:<owner-id> in the lock-hash field.
	fieldSuffix() string
	// waitChannel is where a release is announced to this waiter.
	waitChannel(field string) waitSpec
	// tryAcquire makes one acquisition attempt; enqueue asks to keep a place
	// in line when refused. With guard on, acked is false when fewer than
	// guard.acks replicas acknowledged a grant.
	tryAcquire(ctx context.Context, field string, serverLease, wait time.Duration, guard guardWait, wa waitAttempt) (a attempt, acked bool, err error)
	// releaseOnce runs the release script once (see releaseCall). left is
	// the owner's remaining lease when the release left it holding a lock
	// whose expiry the release shortened (RWMutex reads: the lock lives as
	// long as the longest read lease left): > 0 that lease, < 0 none left,
	// 0 unchanged or unknown.
	releaseOnce(ctx context.Context, field string, r releaseCall) (st releaseStatus, left time.Duration, err error)
	// holdsOf reads how many holds field has on the server.
	holdsOf(ctx context.Context, field string) (int64, error)
	// abandon gives up a place in line after a wait ended without the lock;
	// place is what the wait's attempts last reported of it (attempt.place),
	// 0 when not known.
	abandon(ctx context.Context, field string, wait time.Duration, place int64)
}

// waitAttempt is what an attempt knows of the wait it belongs to.
type waitAttempt struct {
	since  int64 // the score of the targeted wake that woke the waiter; 0: none
	queued bool  // an earlier attempt of this wait left the caller registered
	polite bool  // queue behind a waiter a release just woke, even if the lock is free
	// again: more than one attempt registered the caller since the last
	// woken attempt, so one of them may have run after a release took the
	// caller out of the set and left a second place that the wake did not
	// take: a woken attempt that gets the lock must leave the set too.
	again bool
	// shared: the owner came from the caller's context, so a late release
	// of an earlier hold of it may reach the server during this one; a kind
	// whose acquisitions draw no token otherwise (an unfenced LeanMutex)
	// draws one for the release to name.
	shared bool
}

// attempt is one acquisition attempt's decoded reply.
type attempt struct {
	granted   bool
	fresh     bool // a new hold, not a re-entry
	queued    bool // refused, and the caller keeps a place in line
	foreign   bool // refused by a holder that is not a scriptlock client
	token     int64
	remaining time.Duration // refused: the holder's remaining lease
	sleep     time.Duration // refused: when to try again without a message
	// place names the place a queued attempt registered, for its leave
	// (RWMutex: its deadline); 0: none to name.
	place int64
}

// releaseCall is one attempt of a release, as the engine asks for it.
type releaseCall struct {
	lease    time.Duration // re-arms the lock when holds remain
	latch    string        // the release's latch key; "" with last (none needed)
	latchTTL time.Duration
	retry    bool // an earlier attempt may have run
	// again: an earlier attempt failed at its publish, after its writes (a
	// refused SPUBLISH, the call made again with PUBLISH), so the waiters
	// it was to tell have not heard; unlike a repeat after a lost reply,
	// whose first attempt told them.
	again   bool
	publish string // "publish" or "spublish"
	// vouched: the hold was live (its lease not run out, not found lost)
	// when the release began, so a retry may read a missing owner as this
	// release's own work.
	vouched bool
	// last: the first attempt of a vouched release of the owner's last
	// local hold, for a primitive with a lastReleaser. It gives up every
	// hold the owner has and needs no latch.
	last bool
	// token: the fencing token of a shared hold (hold.shared), which the
	// release names so that a late one cannot release a newer hold of the
	// same owner; 0 for none. Every primitive whose holds draw tokens
	// checks it in releaseOnce.
	token int64
	// keep: the release is the undo of an acquisition whose reply was lost,
	// before the owner's wait goes on (settle).
	keep keepPlace
}

// keepPlace marks the undo of an acquisition whose reply was lost while the
// owner's wait, of length wait as the caller asked it, goes on. A primitive
// that grants only the first in line (FairMutex) puts the owner back there
// when the release frees the lock, instead of handing the lock to the waiter
// behind it, which would send the owner to the back of the line.
type keepPlace struct {
	on   bool
	wait time.Duration
}

// lastReleaser is a primitive whose releaseOnce may have a cheaper script for
// releaseCall.last; releasesLast reports whether it has.
type lastReleaser interface{ releasesLast() bool }

// guardedReleaser is a primitive whose release that leaves holds can report
// a lease left that moves the loss deadline later (RWMutex reads): with the
// failover guard, releaseGuarded sends it with WAIT after it on the same
// connection, and acked reports whether guard.acks replicas acknowledged it.
type guardedReleaser interface {
	releaseGuarded(ctx context.Context, field string, r releaseCall, guard guardWait) (st releaseStatus, left time.Duration, acked bool, err error)
}

type releaseStatus int

const (
	notHeld   releaseStatus = iota // the owner did not hold the lock
	stillHeld                      // one hold fewer, holds remain
	freed                          // the owner's last hold is gone
	// lapsed: one hold was given up whose lease had run out (an RWMutex
	// read hold whose lease keys were gone beside other readers): not held,
	// to its Unlock; to an undo, a hold taken out, its outcome latched, so
	// it reads the count again under a new latch.
	lapsed
)

// errOrphan: the server reports a re-entry of a hold this Client has no record
// of, left by an acquisition whose reply never arrived.
var errOrphan = errors.New("orphaned hold")

// Loss margin: a hold's context ends this much before the server lease as
// last confirmed, so a clock that runs slower than the server's (or a timer
// that fires late) still ends it before another owner can be granted the lock.
const (
	lossDriftFactor = 50 // 2% of the lease
	lossDriftExtra  = 5 * time.Millisecond
)

func lossMargin(lease time.Duration) time.Duration { return lease/lossDriftFactor + lossDriftExtra }

// lossDeadline is when a hold whose lease was set by a call sent at sent
// counts as lost: the lease, less the drift margin, from the send.
func lossDeadline(sent time.Time, lease time.Duration) time.Time {
	return sent.Add(lease - lossMargin(lease))
}

// retryLater reports a reply by which Redis ran nothing and asks to be called
// again: TRYAGAIN (a Cluster slot is being migrated and the call's keys are
// not all on one side: scripts name keys that may not exist, such as the
// waiter set, so every lock script can meet it), CLUSTERDOWN (slots without
// a primary, as during a Cluster failover), LOADING (a restarted server
// still reading its data), READONLY (a primary demoted to a replica in a
// failover the client has not yet seen: a replica writes nothing, and Redis
// refuses a script that may write before it runs), MASTERDOWN (such a
// replica whose link to its primary is down, with replica-serve-stale-data
// no: it runs no script), NOREPLICAS (a primary with fewer good replicas than
// its min-replicas-to-write: Redis refuses a script that may write before it
// runs, one without flags at its first write), BUSY (the server is
// running someone's script past busy-reply-threshold) or OOM (the server is at its maxmemory: Redis
// refuses a flagged script before it runs, any other at its first write that
// may use memory, and lets a script that has written run to its end, so an
// OOM reply means nothing was written), or MISCONF (the server's last RDB
// save failed, with stop-writes-on-bgsave-error: Redis refuses a script that
// may write before it runs, until a save succeeds again or the operator lets
// writes through); or a call that was never sent because
// its node could not be dialled (down, or replaced in a failover the client
// has not yet seen: it refreshes its view on the error). Waits and releases
// call again within their bounds (retryLaterMin doubling to retryLaterMax)
// instead of failing at once.
func retryLater(err error) bool {
	if err == nil {
		return false // before the errors.As targets, which escape: no allocation on success
	}
	var re *rueidis.RedisError
	if errors.As(err, &re) {
		msg := re.Error()
		// MOVED and ASK reach here only from a guarded acquisition's
		// dedicated connection (sendGuarded): rueidis follows them elsewhere.
		_, moved := re.IsMoved()
		_, ask := re.IsAsk()
		return moved || ask || re.IsTryAgain() || re.IsClusterDown() || re.IsLoading() ||
			strings.HasPrefix(msg, "READONLY ") || strings.HasPrefix(msg, "MASTERDOWN ") || strings.HasPrefix(msg, "NOREPLICAS ") ||
			strings.HasPrefix(msg, "BUSY ") || strings.HasPrefix(msg, "OOM ") || strings.HasPrefix(msg, "MISCONF ")
	}
	var s settledError
	return notSent(err) || errors.As(err, &s)
}

// settledError is an acquisition attempt whose connection broke under it
// (its outcome unknown) and which an undo by owner has since settled: the
// server holds nothing for the owner beyond what the Client knows of, so a
// wait may go on.
type settledError struct{ err error }

func (s settledError) Error() string { return s.err.Error() }
func (s settledError) Unwrap() error { return s.err }

// brokenConn reports a call whose connection broke under it (the node died,
// or went away in a failover): its reply is lost, and it ran before the
// break or never will. rueidis breaks connections too: a Sentinel or Cluster
// client that leaves a node (a failover of a primary that stopped answering)
// closes the connection under the calls waiting on it (ErrClosing), and one
// whose server does not answer within ConnWriteTimeout is dropped as dead
// (a read's i/o timeout; a timeout of the call's own deadline comes as
// context.DeadlineExceeded instead). So is one the kernel found dead
// (ETIMEDOUT: TCP keepalive or retransmissions unanswered), and a guarded
// call that stalled (errGuardStalled). A call reading from a connection
// rueidis closes under it (one it drops as dead while the call waits for
// its reply) fails with the read's own error, "use of closed network
// connection" (net.ErrClosed), not with the error the connection was
// dropped for.
func brokenConn(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, rueidis.ErrClosing) || errors.Is(err, os.ErrDeadlineExceeded) ||
		errors.Is(err, syscall.ETIMEDOUT) || errors.Is(err, errGuardStalled)
}

// foreignDeadline reports a call that failed with context.DeadlineExceeded
// while its own context lives: another call's deadline broke the connection
// they shared (rueidis sets the deadline of a call alone on a connection on
// the connection, and fails the calls queued behind it with that call's
// error), which is a broken connection to this call.
func foreignDeadline(ctx context.Context, err error) bool {
	if !errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return false
	}
	d, ok := ctx.Deadline()
	return !ok || time.Now().Before(d)
}

// settle undoes an attempt of unknown outcome before a wait goes on: it
// calls undo until it succeeds, ctx ends or until passes (zero: no limit),
// or Redis refuses it for good (refused, see settleWith). Each undo is
// bounded by the release timeout and by until: rueidis retries the
// read-only hold count on a broken connection for as long as its context
// lasts. later is the background undo (see settleWith).
func (c *Client) settle(ctx context.Context, p primitive, field string, lease, wait time.Duration, until time.Time, later func()) (settled bool, refused error) {
	return c.settleWith(ctx, p.spec().cfg.releaseTimeout, until, func(ctx context.Context) error {
		return c.undoKeeping(ctx, p, field, lease, 0, true, keepPlace{on: true, wait: wait})
	}, later)
}

// settleWith is settle for any undo (a semaphore acquisition's, through its
// record): it calls undo, each call bounded by timeout and by until, until
// it succeeds, ctx ends, the Client closes or until passes (zero: no limit),
// or Redis answers it with an error no retry changes (refusedForGood: the
// Client's password refused after a rotation, NOAUTH or WRONGPASS, an ACL's
// NOPERM), which it returns: the wait ends with it, as with a refusal of
// its own attempt, instead of calling again until ctx or until ends and
// reporting only the broken connection.
// A panic of undo (a client wrapper's, even a panic(nil): goOnAfter) goes on
// on the caller's goroutine once later, the background undo the attempt gets when it is not settled,
// has taken the undo over: the permits a Semaphore's attempt took, which
// have no lease, were otherwise lost for good.
func (c *Client) settleWith(ctx context.Context, timeout time.Duration, until time.Time, undo func(context.Context) error, later func()) (settled bool, refused error) {
	goOnAfter(func() { settled, refused = c.settleUndoing(ctx, timeout, until, undo) }, later)
	return settled, refused
}

// settleUndoing is settleWith but for a panic of undo, which goes on as it is.
func (c *Client) settleUndoing(ctx context.Context, timeout time.Duration, until time.Time, undo func(context.Context) error) (settled bool, refused error) {
	retry := backoff{cur: retryLaterMin, max: retryLaterMax}
	for {
		bound := timeout
		if !until.IsZero() {
			bound = min(bound, time.Until(until))
		}
		if bound <= 0 {
			return false, nil
		}
		actx, cancel := context.WithTimeout(ctx, bound)
		// Close ends it: the undo Close gives an acquisition of unknown
		// outcome (undoLater) takes over, within its own bound.
		stop := context.AfterFunc(c.closingCtx, cancel)
		err := func() error {
			defer stop()
			defer cancel()
			return c.callBounded(actx, undo)
		}()
		if err == nil {
			return true, nil
		}
		if errors.Is(err, rueidis.ErrClosing) {
			// The rueidis client is closed (a connection it left is
			// replaced by then): no call gets through any more.
			return false, nil
		}
		if refusedForGood(err) {
			return false, err
		}
		if c.closingCtx.Err() != nil || retry.wait(ctx, until) != nil {
			return false, nil // or the next turn finds until passed
		}
	}
}

// callBounded runs call with ctx on a goroutine of its own and returns its
// error, or ctx's as soon as ctx ends while call still runs. rueidis bounds
// the opening of a connection (its handshake) by its dial timeout alone (5 s
// by default), and a call waiting for a connection another call is opening
// does not watch its own context: against a server that accepts connections
// but never answers (SIGSTOP, a hung host behind a live kernel), an undo
// would outlive its bound by that long, and so would the wait settling it
// and Close. The goroutine ends when rueidis returns the call, within its
// dial timeout; ctx has ended by then, so the call sends nothing more: what
// it was to give back is left to the lease it may have set (the undo Close
// gives, or a later one, may still give it back). For undos, which are
// rare, and guarded calls (sendBounded), which wait for a WAIT anyway: a
// goroutine per call. A panic of call (a client wrapper's) goes on on the
// caller's goroutine, as an unbounded call's does (on call's own it crashed
// the process); one after the caller has left is logged (cuttable).
func (c *Client) callBounded(ctx context.Context, call func(context.Context) error) error {
	return cuttable(ctx, c.log, "an undo let go at its bound", func() error { return call(ctx) }, func(err error) error { return err })
}

// refusedForGood reports an answer from Redis that the same call made again
// would only get again: an error reply (also wrapped, as ErrWrongKind wraps
// WRONGTYPE) or an error a script declares, but not one by which Redis ran
// nothing for a while (retryLater).
func refusedForGood(err error) bool {
	var re *rueidis.RedisError
	var se *generated.ScriptError
	return ((errors.As(err, &re) && re != nil && !re.IsNil()) || errors.As(err, &se)) && !retryLater(err)
}

// undoRefusedForGood is refusedForGood for a give-back nobody waits for
// (undoLater, undoNow, Unlock's extra holds): not the Client's password
// refused (NOAUTH, WRONGPASS), which a rotation under way gives every call
// only until the password is right again. Stopped there, the give-back left
// the lock held by nobody until its lease ended.
func undoRefusedForGood(err error) bool {
	return refusedForGood(err) && !authRefused(err)
}

// authRefused reports the server refusing the Client's password.
func authRefused(err error) bool {
	var re *rueidis.RedisError
	if !errors.As(err, &re) || re == nil {
		return false
	}
	msg := re.Error()
	return strings.HasPrefix(msg, "NOAUTH ") || strings.HasPrefix(msg, "WRONGPASS ")
}

// unsettled is the error of a wait's attempt whose outcome is unknown (err)
// when its undo was refused for good (refused): both, so that errors.As
// finds Redis's refusal.
func unsettled(err, refused error) error {
	return fmt.Errorf("%w; giving back what it may have taken: %w", err, refused)
}

// notSent reports a call that never left this process: the connection to its
// node could not be opened.
func notSent(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial"
}

// mayHaveRun is err, the error of a recorded call (callRecorded,
// reservedCall), said to be of unknown outcome when one attempt of the call
// may have run (maybeRan; what: what may have happened, and what calling
// again may do): its reply was lost, its context ended while it was on its
// way, or it failed with a dial error, which does not mean it ran nothing
// (rueidis makes a script it may retry again on a new connection after the
// one it was sent on broke, and answers that dial's error), and what
// followed did not settle it. errors.As still finds the dial's
// *net.OpError. The error of a call that never sent its change
// (ranNothing: its reservation failed) is returned as it is.
func mayHaveRun(err error, what string) error {
	if err == nil {
		return nil // before errors.As's targets, which escape: no allocation on success
	}
	var rn ranNothing
	var mr maybeRan
	if errors.As(err, &rn) || !errors.As(err, &mr) {
		return err
	}
	return outcomeUnknown(err, what)
}

// maybeRan marks the error of a recorded call one attempt of which may have
// run (mayHaveRun). Its text and chain are the error's own.
type maybeRan struct{ error }

func (m maybeRan) Unwrap() error { return m.error }

// ranNothing marks the error of a reserved call whose change was never sent
// (reservedCall: its reservation failed). Its text and chain are the
// error's own.
type ranNothing struct{ error }

func (r ranNothing) Unwrap() error { return r.error }

// outcomeUnknown is err said to be of unknown outcome (what: what may have
// happened, and what calling again may do): errors.Is finds both err and
// ErrOutcomeUnknown.
func outcomeUnknown(err error, what string) error {
	return fmt.Errorf("%w (%w: %s)", err, ErrOutcomeUnknown, what)
}

const (
	retryLaterMin = 2 * time.Millisecond
	retryLaterMax = 100 * time.Millisecond
)

// callAgain runs call until its reply is not a retryLater one or ctx ends
// (then it returns that reply), for calls that must not fail on a transient
// refusal but cannot be repeated after one that may have run (a release of
// permits, a count-down).
func callAgain[T any](ctx context.Context, call func() (T, error)) (T, error) {
	rt := newRetrier()
	for {
		v, err := call()
		if !rt.again(ctx, err, time.Time{}) {
			return v, rt.failed(ctx, err)
		}
	}
}

// recordKey names a new call's record, <prefix>:{<key>}:<client-id>:<n>, in
// key's hash slot: the client id is random and the counter never repeats
// within it, so records are unique without drawing random bytes per call.
func (c *Client) recordKey(prefix, key string) string {
	// One allocation: built on the stack, as redissonName would name it.
	var buf [256]byte
	b := append(buf[:0], prefix...)
	if strings.Contains(key, "{") {
		b = append(append(b, ':'), key...)
	} else {
		b = append(append(append(b, ":{"...), key...), '}')
	}
	b = append(append(append(b, ':'), c.id...), ':')
	return string(strconv.AppendUint(b, c.requests.Add(1), 36))
}

// trySet sets a semaphore's or latch's count when none is set
// (TrySetPermits, TrySetCount) through set, which is given the record key
// (prefix, one per call; Delete leaves it to expire), a nonce unique to this call
// and the publish command. The call leaves the nonce in the record, so it is
// made again as a recorded call is (callRecorded): a repeat of a call that
// set the count answers true instead of finding the count its own first
// attempt set. The record is the call's own: one per name would be taken by
// the next call that sets a count there (after a Delete, or a latch's zero),
// and the repeat would answer false about the count it set.
func (c *Client) trySet(ctx context.Context, prefix, key string, set func(ctx context.Context, record, nonce, publish string) (bool, error)) (bool, error) {
	nonce := c.id + ":" + strconv.FormatUint(c.requests.Add(1), 36)
	record := setRecordKey(prefix, key, nonce)
	// A call Redis refused is the caller's error, as before: a TrySet waits
	// for nothing (docs/guarantees.md, noeviction).
	ok, err := c.callRecordedBool(ctx, false, func(ctx context.Context, publish string) (bool, error) {
		return set(ctx, record, nonce, publish)
	})
	return ok, mayHaveRun(err, "the count may have been set; trying again may answer false about it, or set it anew once it was deleted or counted down")
}

// setRecordKey names the record of the call (nonce) that set the count of
// the semaphore or latch at key (prefix redisson_sc_latch or
// redisson_countdownlatch_latch, as its other records).
func setRecordKey(prefix, key, nonce string) string {
	return redissonName(prefix, key) + ":set:" + nonce
}

// callRecorded runs call, a change that records itself on the server so that
// a repeat changes nothing twice (Semaphore.Release, CountDown), and makes it
// again as a release is made again (changeRetry); refusals says whether calls
// Redis refused (retryLater) are made again until ctx ends, for at most half
// the record's life (without, such an answer is the call's error:
// DrainPermits fails on a full Redis rather than wait). call must run within
// the context it is given.
func (c *Client) callRecorded(ctx context.Context, refusals bool, call func(ctx context.Context, publish string) (int64, error)) (int64, error) {
	if err := ctx.Err(); err != nil {
		// Ended before anything was sent: the change did not run, which
		// the caller may be told for certain (rueidis answers a done
		// context with its error too, which would read as maybe run).
		return 0, err
	}
	// The call and every repeat of it, rueidis's own retries included (they
	// go on while ctx lasts), end well before its record expires: a repeat
	// that reached the server after that would change the count again. Half
	// the record's life leaves the other half for a last attempt's
	// reconnection (rueidis's dial and write timeouts) before it is sent.
	// (A release's context ends sooner: no second timer on its path.)
	ctx, cancel := c.recordBound(ctx)
	defer cancel()
	cr := changeRetry{rt: newRetrier()}
	// ran: an attempt may have run, its reply lost or cut short by ctx (a
	// dial error too: rueidis may have sent it before the dial it answers).
	ran := false
	for {
		publish := c.publishCommand()
		v, err := call(ctx, publish)
		if err == nil {
			return v, nil
		}
		ran = ran || notSent(err) || !replied(err) && !retryLater(err)
		if again, _, err := cr.next(ctx, c, refusals, publish, err); !again {
			if ran && !replied(err) {
				// Redis's last answer, if it was one, settles the call (a
				// repeat answers what the first attempt did, from its
				// record); a refusal or the end of ctx does not.
				err = maybeRan{err}
			}
			return 0, err
		}
	}
}

// recordBound bounds ctx to half a record's life (callRecorded).
func (c *Client) recordBound(ctx context.Context) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Deadline(); ok && time.Until(d) <= c.recordTTL/2 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, c.recordTTL/2)
}

// callRecordedBool is callRecorded for a call that answers true or false.
func (c *Client) callRecordedBool(ctx context.Context, refusals bool, call func(ctx context.Context, publish string) (bool, error)) (bool, error) {
	v, err := c.callRecorded(ctx, refusals, func(ctx context.Context, publish string) (int64, error) {
		ok, err := call(ctx, publish)
		if ok {
			return 1, err
		}
		return 0, err
	})
	return err == nil && v == 1, err
}

// changeRetry decides, for a call that changes something and may be made
// again safely (a release naming its latch, a recorded call), what follows
// a failed attempt: after it failed at a sharded publish, after its writes,
// it is made again with PUBLISH; while Redis answers that it ran nothing
// (retryLater), with refusals, until ctx ends; when its outcome is unknown
// (a reply lost with its connection), up to three more times, 50 ms apart
// and growing, within ctx; an answer from Redis (an error reply, or an
// error a script declares) ends it.
type changeRetry struct {
	rt      retrier
	attempt int
	// refused: an attempt failed at its sharded publish, after its writes,
	// and was made again with PUBLISH.
	refused bool
}

// next reports whether to make the call again after err, and whether the
// failed attempt may have run; when not, the error to return. It pauses as
// the decision needs.
func (cr *changeRetry) next(ctx context.Context, c *Client, refusals bool, publish string, err error) (again, mayHaveRun bool, _ error) {
	if c.publishPlainly(err, publish) {
		cr.refused = true
		return true, true, nil
	}
	if refusals && retryLater(err) {
		if !cr.rt.again(ctx, err, time.Time{}) {
			return false, false, cr.rt.failed(ctx, err)
		}
		return true, false, nil
	}
	if replied(err) || cr.attempt >= 3 || ctx.Err() != nil {
		return false, false, cr.rt.failed(ctx, err)
	}
	cr.attempt++
	select {
	case <-time.After(time.Duration(cr.attempt) * 50 * time.Millisecond):
		return true, true, nil
	case <-ctx.Done():
		// The deadline, and the failure it cut short.
		if cerr := ctx.Err(); !errors.Is(err, cerr) {
			return false, false, fmt.Errorf("%w, after %w", cerr, err)
		}
		return false, false, err
	}
}

// replied reports an error that is Redis's answer to the call: an error
// reply, or one a script declares (generated.ScriptError: NOT_COUNT, RANGE),
// which the same call made again would only get again.
func replied(err error) bool {
	if _, ok := rueidis.IsRedisErr(err); ok {
		return true
	}
	var se *generated.ScriptError
	return errors.As(err, &se)
}

// retrier makes again the calls that ran nothing (retryLater), pausing from
// retryLaterMin doubling to retryLaterMax, half random, and keeps the last
// such refusal for the error of a call that ctx then cuts short.
type retrier struct {
	later   backoff
	refused error
}

func newRetrier() retrier { return retrier{later: backoff{cur: retryLaterMin, max: retryLaterMax}} }

// again reports whether a call that failed with err is to be made again:
// err ran nothing, and after the pause ctx has not ended and deadline (zero:
// none) has not passed. It counts the retry for the Observer.
func (r *retrier) again(ctx context.Context, err error, deadline time.Time) bool {
	if !retryLater(err) || r.later.wait(ctx, deadline) != nil || (!deadline.IsZero() && !time.Now().Before(deadline)) {
		return false
	}
	r.refused = err
	retried(ctx)
	return true
}

// answered starts the pauses and the refusal afresh after a call Redis ran.
func (r *retrier) answered() { r.later.cur, r.refused = retryLaterMin, nil }

// failed is the error of a call that failed for good with err. When ctx has
// ended and a refusal came before, it is both: the context is what ended
// the call, the refusal why it had not succeeded, and errors.Is and errors.As
// find either, whether the end fell in a pause (err is the refusal) or cut
// an attempt short (err is the context's).
func (r *retrier) failed(ctx context.Context, err error) error {
	cerr := ctx.Err()
	if d, ok := ctx.Deadline(); cerr == nil && ok && !time.Now().Before(d) && errors.Is(err, context.DeadlineExceeded) {
		// The call saw ctx's deadline pass before ctx's own timer fired.
		// (A call's own timeout, such as a dial's i/o timeout, which
		// errors.Is also reads as DeadlineExceeded, is no end of ctx.)
		cerr = context.DeadlineExceeded
	}
	switch {
	case err == nil || cerr == nil:
		return err
	case retryLater(err):
		return fmt.Errorf("%w, after %w", cerr, err)
	case r.refused != nil:
		return fmt.Errorf("%w, after %w", err, r.refused)
	}
	return err
}

// unknownOutcome reports whether a failed call may still have run on the
// server: anything but a reply from Redis itself.
func unknownOutcome(err error) bool {
	if _, ok := rueidis.IsRedisErr(err); ok || notSent(err) {
		return false
	}
	var se *generated.ScriptError
	if errors.As(err, &se) {
		return false
	}
	return !errors.Is(err, ErrUpgrade) && !errors.Is(err, ErrInvalidArgument) && !errors.Is(err, ErrNotReentrant)
}

// enter registers an acquisition in flight, so Close waits for it; false when
// the Client is closing. leave ends it.
func (c *Client) enter() bool { return c.inflight.enter() }

func (c *Client) leave() {
	if c.inflight.done() == 0 && c.forceKept.Load() > 0 {
		c.pruneForcing()
	}
	if now := monoNow(); now >= c.latchSweep.Load() {
		c.sweepUndoLatches(now)
	}
}

// latchSweepEvery: how often at most an acquisition's end sweeps the undo
// latches given up on (sweepUndoLatches).
const latchSweepEvery = time.Second

// sweepUndoLatches drops the undo latches given up on (see
// undoLatchLocked), once a latchSweepEvery, as acquisitions end: they were
// dropped only as another undo drew a latch, and stayed for good after the
// last one, one per lock name and owner.
func (c *Client) sweepUndoLatches(now int64) {
	next := c.latchSweep.Load()
	if now < next || !c.latchSweep.CompareAndSwap(next, now+int64(latchSweepEvery)) {
		return // another acquisition's end sweeps
	}
	c.mu.Lock()
	c.sweepUndoLatchesLocked(now)
	if len(c.forcing) > 0 {
		// Under an acquisition always in flight (a wait that never
		// ends), pruneForcing never runs: drop the marks a minute old, as
		// the next ForceUnlock would.
		c.dropEndedForcingLocked(now)
		c.forceKept.Store(int32(len(c.forcing)))
	}
	c.mu.Unlock()
}

func (c *Client) sweepUndoLatchesLocked(now int64) {
	for k, l := range c.undoLatches {
		if now-l.at >= int64(undoLatchTTL)/2 {
			delete(c.undoLatches, k) // given up on: no undo of it came again
		}
	}
	if len(c.undoLatches) == 0 {
		c.undoLatches = nil // its buckets too
	}
}

// fieldOf is the lock-hash field of owner on p: <client-id>:<owner-id>
// followed by the side's suffix.
func (c *Client) fieldOf(p primitive, owner string) string {
	return c.id + ":" + owner + p.fieldSuffix()
}

// owner returns the owner of an acquisition and its field: the owner in ctx
// (a lock context's or WithOwner's), or else a fresh one, so that goroutines
// sharing a handle exclude each other as with sync.Mutex. A fresh owner is
// the Client's random owner prefix and a counter that never repeats within
// the Client: unique without drawing random bytes per Lock, and no owner id
// an application picks by hand (a worker number, say) takes its form.
func (c *Client) owner(ctx context.Context, p primitive) (owner, field string, fromCtx bool) {
	if o, ok := OwnerFrom(ctx); ok {
		return o, c.fieldOf(p, o), true
	}
	// One allocation: the owner id is a substring of the field.
	var buf [128]byte
	b := append(buf[:0], c.id...)
	b = append(b, ':')
	b = append(b, c.ownerPrefix...)
	b = strconv.AppendUint(b, c.owners.Add(1), 36)
	n := len(b)
	b = append(b, p.fieldSuffix()...)
	field = string(b)
	return field[len(c.id)+1 : n], field, false
}

// ownerRule is a primitive that refuses some owner ids a caller may give
// (WithOwner): an RWMutex's side refuses one whose fields would be another
// owner's.
type ownerRule interface{ checkOwner(owner string) error }

// checkOwner applies p's ownerRule, if it has one, to the owner ctx names.
func checkOwner(ctx context.Context, p primitive) error {
	r, ok := p.(ownerRule)
	if !ok {
		return nil
	}
	if o, has := OwnerFrom(ctx); has {
		return r.checkOwner(o)
	}
	return nil
}

// readNonce marks a shared owner's new read hold (RwReadAcquire): unique
// within the Client, whose id is part of the field, and never 1, the mark of
// an unmarked hold.
func (c *Client) readNonce() int64 { return int64(c.owners.Add(1)) + 1 }

// sharedAcquire counts an acquisition in flight for an owner that other
// goroutines may share (it came from the caller's context), and returns the
// function that uncounts it. Its waits before counting are bounded by ctx:
// when ctx ends first, nothing is counted and ctx's error is returned (the
// caller sends no attempt).
func (c *Client) sharedAcquire(ctx context.Context, id holdKey) (func(), error) {
	c.mu.Lock()
	busy := func() bool {
		if h := c.holds[id]; h != nil && h.lastReleases > 0 {
			// A release of the owner's last hold is under way and would
			// take a re-entry made now with it: acquire after it.
			return true
		}
		// An undo of the owner's ended hold is reading what its releases
		// name (see LeanMutex.undoMark): send nothing before that read.
		return c.marking[id] > 0
	}
	if busy() && !c.closing {
		// Both are bounded by a timeout of their own, up to the release
		// timeout or the ended hold's lease, which may be far longer than
		// what the caller gave this attempt.
		stop := context.AfterFunc(ctx, func() {
			c.mu.Lock()
			c.acquired.Broadcast()
			c.mu.Unlock()
		})
		for busy() && !c.closing && ctx.Err() == nil {
			c.acquired.Wait()
		}
		stop()
		if err := ctx.Err(); err != nil && busy() && !c.closing {
			c.mu.Unlock()
			return nil, err
		}
	}
	if c.acquiring == nil {
		c.acquiring = map[holdKey]int{}
	}
	c.acquiring[id]++
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		if c.acquiring[id]--; c.acquiring[id] <= 0 {
			delete(c.acquiring, id)
		}
		c.touchedLocked(id)
		c.acquired.Broadcast() // a waiting re-entry may now be the last attempt
		c.mu.Unlock()
	}, nil
}

// sharedWait counts a wait of an owner from the caller's context, which
// goroutines of that owner may share. The function it returns ends the count,
// given whether this wait holds a place in line (queued), and reports whether
// the caller is to leave the line: it is the last of them to go and one of
// them held a place. While another still waits, the place they share stays
// theirs (a wake for the owner reaches them all, see
// subscriptions.wakeNamedLocked). A caller told to leave calls left once it
// has (or could not): until then a new wait of the owner waits for that
// leave, bounded by ctx, before its first attempt, since the leave names the
// owner's field alone and would take out the place the new wait takes (in
// the background after a deadline, it often reaches the server after the
// new wait's first attempt).
func (c *Client) sharedWait(ctx context.Context, id lineKey) func(queued bool, place int64) (leave bool, at int64, left func()) {
	c.mu.Lock()
	if c.waiting == nil {
		c.waiting = map[lineKey]sharedWaits{}
	}
	for c.waiting[id].leaving != nil {
		ch := c.waiting[id].leaving
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
		case <-c.closingCtx.Done():
		}
		c.mu.Lock()
		if ctx.Err() != nil || c.closingCtx.Err() != nil {
			// The wait ends at its first look at ctx or Close; its time
			// up (see acquire), it makes its one last attempt.
			break
		}
	}
	w := c.waiting[id]
	w.n++
	c.waiting[id] = w
	c.mu.Unlock()
	return func(queued bool, place int64) (bool, int64, func()) {
		c.mu.Lock()
		defer c.mu.Unlock()
		w := c.waiting[id]
		w.n--
		// A place left to the others is the last one's to leave, even if
		// that one never held it itself (it gave up before an answer).
		w.queued = w.queued || queued
		if queued {
			// They share one place: its latest registration is named, or
			// none when one of them may have registered unseen.
			w.unnamed = w.unnamed || place == 0
			w.place = max(w.place, place)
		}
		if w.n > 0 {
			c.waiting[id] = w
			return false, 0, nil
		}
		if !w.queued {
			if w.leaving == nil {
				delete(c.waiting, id)
			} else {
				c.waiting[id] = sharedWaits{leaving: w.leaving}
			}
			return false, 0, nil
		}
		if w.leaving != nil {
			// A wait that gave up on ctx while an earlier leave was still
			// under way: that leave takes the place out.
			c.waiting[id] = sharedWaits{leaving: w.leaving}
			return false, 0, nil
		}
		ch := make(chan struct{})
		c.waiting[id] = sharedWaits{leaving: ch}
		if w.unnamed {
			w.place = 0
		}
		return true, w.place, func() { c.leftLine(id, ch) }
	}
}

// leftLine ends the leave of the owner's line (id) marked by ch, and lets
// the waits of the owner that wait for it make their first attempt.
func (c *Client) leftLine(id lineKey, ch chan struct{}) {
	c.mu.Lock()
	if c.waiting[id].leaving == ch {
		if w := c.waiting[id]; w.n > 0 {
			w.leaving = nil
			c.waiting[id] = w
		} else {
			delete(c.waiting, id)
		}
	}
	c.mu.Unlock()
	close(ch)
}

// leavingLate marks the owner's line (id) as being left by the undo of an
// attempt of unknown outcome, unless the owner waits there again (waiting):
// until the caller, which then leaves the line, calls left, a new wait of
// the owner waits for that leave before its first attempt, as for a wait's
// own leave (sharedWait). A leave already under way is waited for first,
// bounded by ctx (its error).
func (c *Client) leavingLate(ctx context.Context, id lineKey) (left func(), waiting bool, err error) {
	c.mu.Lock()
	for c.waiting[id].n == 0 && c.waiting[id].leaving != nil {
		ch := c.waiting[id].leaving
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
		c.mu.Lock()
	}
	defer c.mu.Unlock()
	if c.waiting[id].n > 0 {
		return nil, true, nil
	}
	if c.waiting == nil {
		c.waiting = map[lineKey]sharedWaits{}
	}
	ch := make(chan struct{})
	c.waiting[id] = sharedWaits{leaving: ch}
	return func() { c.leftLine(id, ch) }, false, nil
}

// sharedWaits counts the waits of one shared owner (Client.waiting).
type sharedWaits struct {
	n      int
	queued bool // one of them that left held a place in line
	// place: the latest place those that left named (attempt.place);
	// unnamed: one of them held a place it could not name.
	place   int64
	unnamed bool
	// leaving: the last wait to go is leaving the line; closed once it has.
	leaving chan struct{}
}

// lineKey names a shared owner's place in one line: its hold and the line.
// A Mutex and a FairMutex of one name share the hold's key and field, not
// the line (the Mutex's waiter set, the FairMutex's queue in its protocol):
// a wait in one gives up no place in the other.
type lineKey struct {
	holdKey
	line string
}

// waitLine names the line p's refused attempts keep a place in (see
// primitive.abandon); "" for none.
func waitLine(p primitive) string {
	switch p := p.(type) {
	case *Mutex:
		return p.waiters
	case *FairMutex:
		return p.queue
	case *rwSide:
		return p.rw.writers
	}
	return ""
}

// ranOutUnanswered reports a call with a wait's end (until, zero: none)
// that failed with a deadline once that end had passed while the caller's
// ctx lives: the wait ran out with a call to the server in flight or being
// settled, which the wait reports as it does any wait cut off unanswered,
// not as a deadline the caller never set.
func ranOutUnanswered(ctx context.Context, err error, until time.Time) bool {
	return !until.IsZero() && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) && !time.Now().Before(until)
}

// acquire is the one acquisition loop: wait < 0 waits until ctx ends, 0 makes
// one attempt. Every call is bounded by ctx; an attempt whose outcome is
// unknown is undone by owner.
func (c *Client) acquire(ctx context.Context, p primitive, wait, lease time.Duration) (context.Context, error) {
	if c.observing(ctx) {
		return c.observeAcquire(ctx, opOf(p), func(ctx context.Context) (context.Context, error) { return c.acquire(ctx, p, wait, lease) },
			func(lctx context.Context) error { return c.unlock(lctx, p) })
	}
	s := p.spec()
	if err := s.check(ctx); err != nil {
		return nil, opError("lock", s.name, err)
	}
	if err := checkOwner(ctx, p); err != nil {
		return nil, opError("lock", s.name, err)
	}
	if !c.enter() {
		return nil, opError("lock", s.name, ErrClosed)
	}
	defer c.leave()
	owner, field, shared := c.owner(ctx, p)
	serverLease := s.serverLease(lease)
	ws := p.waitChannel(field)
	if s.cfg.guard {
		ws.overrun = s.cfg.guardTimeout // a guarded attempt waits that long for a replica
	}
	queued := false
	// What the last answered attempt said of the place it registered, for
	// the leave to name it (attempt.place); 0 after an attempt that may have
	// registered without telling.
	var lastPlace int64
	var lastErr error
	// unanswered: the last attempt failed without the server's answer (a
	// wait that then runs out: the wait's end cut it off, also before it
	// was sent on a connection that could not be made); an answer clears it.
	// True until one: a wait whose end comes before its first attempt is
	// sent (a shared owner's release of its last hold still under way, see
	// sharedAcquire) saw no holder either.
	unanswered := true
	var leaveShared func(queued bool, place int64) (bool, int64, func())
	var began time.Time // read only for a bounded wait: a clock read fewer per Lock
	if wait > 0 {
		began = time.Now()
	}
	cut := false
	if shared && wait != 0 {
		// Its wait for an earlier wait's leave is part of the wait: bounded
		// by the wait time too (a stalled leave takes up to the release
		// timeout).
		sctx, cancel := ctx, context.CancelFunc(func() {})
		if wait > 0 {
			sctx, cancel = context.WithDeadline(ctx, began.Add(wait))
		}
		leaveShared = c.sharedWait(sctx, lineKey{holdID(s.key, field), waitLine(p)})
		// Its time ran out while that leave was under way: it gives up
		// (below). An attempt now could take a place in line that the
		// leave, run on the server already, would not take out, nor this
		// wait (see sharedWait).
		cut = wait > 0 && sctx.Err() != nil && ctx.Err() == nil
		cancel()
	}
	var ended *waitEnd // for the undo of an attempt of unknown outcome (undoLater)
	settled := false   // an attempt of unknown outcome was settled and the wait went on
	// The longest lease a settled attempt set: a re-entry of a hold the
	// watchdog renews sets the watchdog's, longer than serverLease.
	var settledLease time.Duration
	defer func() {
		if ended != nil {
			ended.over.Store(true)
		}
		if settled {
			// A settled attempt may still reach the server after its undo
			// (rueidis dropped its connection as dead, or cut it off as
			// stalled, while its bytes were on their way) and grant the
			// owner a hold nobody releases: look again, as undoLater does,
			// now that the wait's own attempts are over, for as long as
			// the lease it sets.
			c.recheckLater(p, field, settledLease, time.Now().Add(settledLease), ended)
		}
	}()
	defer func() {
		left := func() {}
		if leaveShared != nil {
			// The place is the others' too while they wait: the last to
			// go leaves it.
			var done func()
			if queued, lastPlace, done = leaveShared(queued, lastPlace); done != nil {
				left = done
			}
		}
		if !queued {
			return
		}
		// A copy for the leaves in the background: lastPlace itself,
		// captured there after its changes, would be on the heap for every
		// acquisition.
		place := lastPlace
		if ctx.Err() == nil && (lastErr == nil || !unknownOutcome(lastErr)) {
			if wait > 0 {
				// Waited for as the wait's calls are: until waitOverrun
				// (plus the guard's) past the wait's end, or ctx's end; then
				// it goes on in the background. A server that stopped
				// answering once the wait's attempts were answered (as it
				// subscribed) kept the caller for the release timeout.
				done := make(chan struct{})
				// A panic of the leave (a client wrapper's) has no caller
				// to reach: logged, and the place expires on its own, as
				// after a leave that failed.
				if c.background(logged(c.log, leavingLine, func() {
					defer close(done)
					defer left()
					p.abandon(ctx, field, wait, place)
				})) {
					t := time.NewTimer(time.Until(began.Add(wait).Add(addSat(waitOverrun, ws.overrun))))
					defer t.Stop()
					select {
					case <-done:
					case <-t.C:
					case <-ctx.Done():
					}
					return
				}
			}
			defer left()
			p.abandon(ctx, field, wait, place)
			return
		}
		// The caller's deadline has passed or the server did not answer in
		// time: leave the line in the background rather than keep the caller
		// past its deadline (the place expires on its own with the waiter
		// timeout anyway).
		if !c.background(logged(c.log, leavingLine, func() {
			defer left()
			p.abandon(c.ctx, field, wait, place)
		})) {
			// Close began, and waits for this acquisition: leave here,
			// bounded as a leave Close waits for is (leaveContext). An
			// attempt Close cut off, on a server slow to answer but
			// answering, left the waiter in line, where it held up every
			// waiter behind it until it expired (in Redisson's queue, up
			// to threadWaitTime times its place). Not when the undo Close
			// gave the attempt got no answer: the leave would get none
			// either, and would only keep Close a second longer.
			defer left()
			if ended == nil || !ended.unanswered.Load() {
				p.abandon(c.ctx, field, wait, place)
			}
		}
	}()
	var (
		lctx      context.Context
		remaining time.Duration
		regs      int // refused attempts that registered since the last woken one
		waitUntil time.Time
	)
	if cut {
		// No attempt was made, so no holder seen: the wait ended while the
		// owner's earlier leave still waited for the server's answer.
		return nil, &NotAcquiredError{Name: s.name, Unanswered: true}
	}
	awaitFor := wait
	if wait > 0 {
		waitUntil = began.Add(wait)
		// What is left of it (an attempt is made all the same, given
		// waitOverrun past the wait's end).
		awaitFor = max(time.Until(waitUntil), time.Nanosecond)
	}
	ok, err := c.await(ctx, ws, awaitFor, func(actx context.Context, since int64, polite bool) (bool, tryAgain, error) {
		if shared {
			// Counted while its calls are in flight, not while it sleeps.
			done, err := c.sharedAcquire(actx, holdID(s.key, field))
			if err != nil {
				// Its time ran out before it could be sent: no attempt.
				return false, tryAgain{}, err
			}
			defer done()
		}
		for range 3 {
			start := time.Now()
			forceSeq := c.forceSeq.Load() // before the attempt is sent (see forcedSince)
			var mark *leaseMark
			var markAt time.Time // the loss deadline of the lease a re-entry sets on mark's hold
			// The lease the attempt sets on the server: the caller's, or
			// the watchdog's for a re-entry of a hold it renews (below).
			setLease := serverLease
			var beside time.Time // see below; zero: none
			var besideDone func()
			if shared {
				// A re-entry sets the lock's expiry to its own lease as soon
				// as the script runs, before its reply is back (or if it is
				// lost): the owner's hold must not outlive a shorter one.
				c.mu.Lock()
				held := c.holds[holdID(s.key, field)]
				var watched time.Duration // 0: not renewed by the watchdog
				if held != nil && held.renewing {
					watched = held.lease
				}
				// No hold of the owner here, yet another acquisition of
				// it in flight: the server may grant that one first, and
				// this attempt then re-enters its hold and sets its own
				// lease on it, before (or without) a reply. That hold,
				// once registered, must not outlive this lease.
				if held == nil && c.inFlightLocked(holdID(s.key, field)) > 1 && reentrySetsLease(p) && p.side() != sideLean {
					beside = lossDeadline(start, setLease)
				}
				c.mu.Unlock()
				if !beside.IsZero() {
					besideDone = c.boundSent(holdID(s.key, field), nil, beside)
				}
				// A LeanMutex has no re-entry: its SET NX leaves a held
				// key and its expiry as they are (the attempt ends with
				// ErrNotReentrant), so it must not cut the hold short.
				if held != nil && p.side() != sideLean {
					var at time.Time // RWMutex: the re-entry cannot shorten it
					if reentrySetsLease(p) {
						// The watchdog renews the owner's hold until its
						// Unlock: a re-entry with a shorter lease must not
						// let the lock expire under it before the next
						// renewal (at a third of the watchdog's lease), so
						// it sets the watchdog's lease, which that renewal
						// would set again anyway.
						setLease = max(setLease, watched)
						at = lossDeadline(start, setLease)
					}
					mark = c.leaseCallKeeping(held, at, watched > 0 && keepsRenewedLease(held.side))
					markAt = at
				}
			}
			// Bounded by actx: by ctx, and by the wait's end when it has one.
			guard := c.guarded(actx, s.cfg, s.key)
			var sent time.Time // for the guard's report only
			if guard.on() && c.cfg.observer != nil {
				sent = time.Now()
			}
			a, acked, err := func() (a attempt, acked bool, err error) {
				if mark != nil {
					// Also when the call panics: a mark left open would keep
					// every renewal from moving the deadline later.
					defer mark.end()
				}
				returned := false
				if !markAt.IsZero() {
					// A re-entry of unknown outcome may still set its lease
					// on the server after later calls of the hold, and after
					// its undo has stopped looking for it: as an Extend's
					// (leaseUnknown), recorded before the mark ends.
					defer func() {
						if !returned || err != nil && unknownOutcome(err) {
							c.leaseUnknown(mark.h, setLease, markAt)
						}
					}()
				}
				if besideDone != nil {
					// Its reply's grant bounds that hold from here on.
					defer besideDone()
				}
				a, acked, err = p.tryAcquire(actx, field, setLease, wait, guard, waitAttempt{since: since, queued: queued, polite: polite, again: regs > 1, shared: shared})
				returned = true
				return a, acked, err
			}()
			if o := c.cfg.observer; o != nil && guard.on() && err == nil && a.granted {
				// Only a grant is the guard's to keep or undo: a refused
				// attempt's WAIT (for its place in line, or for nothing)
				// is no failover-guard outcome.
				c.reportGuard(o, GuardEvent{Acknowledged: acked, Duration: time.Since(sent)})
			}
			unanswered = err != nil
			if err != nil {
				lastErr = err
				// It may have registered anew without saying so (a
				// refused token gives the place back with a new deadline).
				lastPlace = 0
				if unknownOutcome(err) {
					// The script may have run: take back whatever it granted.
					queued = queued || wait != 0
					if !beside.IsZero() {
						// It may have re-entered the owner's hold registered
						// since, and set its lease there: that hold is
						// bounded by it, and the watchdog, should it renew
						// the hold, renews it at once.
						c.besideLost(holdID(s.key, field), setLease, beside)
					}
					later := func() {
						if wait != 0 && ended == nil {
							ended = &waitEnd{wait: wait}
						}
						c.undoLaterQueued(p, field, setLease, start.Add(setLease), 0, ended)
					}
					if wait != 0 && (brokenConn(err) || foreignDeadline(actx, err)) {
						ok, refused := c.settle(ctx, p, field, setLease, wait, waitUntil, later)
						if ok {
							// Settled: the wait goes on (a node that died or
							// failed over is not the end of a Lock).
							if ended == nil {
								ended = &waitEnd{wait: wait}
							}
							settled = true
							settledLease = max(settledLease, setLease)
							return false, tryAgain{}, settledError{err}
						}
						if refused != nil {
							err = unsettled(err, refused)
						}
					}
					later()
				}
				if mark != nil && (errors.Is(err, ErrUpgrade) || errors.Is(err, generated.ErrBadFence)) {
					// The lock is in read mode with the owner reading: it
					// has no writer, so the owner's write hold is gone. Or
					// the script found the lock free and drew a token,
					// which the counter refused: the hold is gone too.
					c.refusedReentry(p, mark.h)
				}
				return false, tryAgain{}, err
			}
			queued, lastPlace = a.queued, a.place
			if !a.granted && mark != nil {
				c.refusedReentry(p, mark.h)
			}
			if !a.granted {
				if a.queued {
					if since != 0 {
						regs = 1 // back in its old place, the one place it has
					} else {
						regs++
					}
				}
				remaining = a.remaining
				return false, tryAgain{sleep: a.sleep, foreign: a.foreign}, nil
			}
			if hook := c.grantHook.Load(); hook != nil {
				(*hook)()
			}
			// A grant no replica has, or that outlived ctx, is given back
			// (below): as a re-entry, it must not move the owner's hold on.
			kept := acked
			select {
			case <-ctx.Done():
				kept = false
			default:
			}
			lctx, err = c.grant(ctx, p, owner, field, a, lease, serverLease, setLease, start, forceSeq, shared, mark, kept)
			switch {
			case errors.Is(err, errForcedGrant):
				// Give back what the ForceUnlock may have left, and try
				// again once it has ended.
				// (Unsettled, as the owner's other goroutines come and go:
				// the background undo undoNow leaves gives it back.)
				if err := c.undoNow(p, field, setLease); err != nil && !errors.Is(err, errUndoUnsettled) {
					return false, tryAgain{}, err
				}
				c.awaitForcing(actx, s.key)
				continue
			case errors.Is(err, errOrphan):
				// Give the unknown hold back and try again at once.
				if err := c.undoNow(p, field, setLease); err != nil && !errors.Is(err, errUndoUnsettled) {
					return false, tryAgain{}, err
				}
				continue
			case err != nil:
				_ = c.undoNow(p, field, setLease)
				return false, tryAgain{}, err
			}
			if !kept {
				// Give back a grant no replica has (the failover guard) or
				// that outlived ctx; should that release fail, keep trying
				// in the background rather than leave the lock to its lease.
				// Decided once, before grant: a ctx ending since keeps a
				// grant that grant has already moved the hold on for (a
				// re-entry's hand-over to the watchdog), as a ctx ending
				// just after Lock returns does.
				uerr := c.unlock(context.WithValue(lctx, inAcquireKey{}, true), p)
				undone := uerr == nil || errors.Is(uerr, ErrNotHeld)
				if !undone {
					c.undoLater(p, field, setLease, start.Add(setLease), 0)
				}
				if !acked {
					// Not a re-entry's: its wait is the owner's hold.
					_, err := c.unackedWaitError(actx, s.cfg, s.key, guard, wait, undone && mark == nil)
					return false, tryAgain{}, err
				}
				return false, tryAgain{}, ctx.Err()
			}
			// The grant came back after the hold's loss deadline (a round
			// trip longer than the lease): the lock may have expired on the
			// server already. Its loss timer fires on a goroutine of its
			// own, and the context went back to the caller alive.
			if lc, isLC := lctx.(*lockCtx); isLC && c.monoClock() >= lc.hold.lossAt.Load() {
				c.lossPassed(lc.hold, true)
				if lc.hold.released() {
					// Ended here or by that timer, which may still be
					// cancelling the hold's contexts (hold.end).
					<-lc.Done()
				}
			}
			return true, tryAgain{}, nil
		}
		return false, tryAgain{}, errOrphan
	})
	switch {
	case errors.Is(err, errSubscribeUnanswered):
		// Seen held, then the server did not confirm the subscription
		// to its release by the wait's end: no answer, not a holder,
		// ended the wait. The lease that attempt told of is still the
		// one last seen.
		return nil, &NotAcquiredError{Name: s.name, Remaining: remaining, Unanswered: true}
	case err != nil && (cutByOuterWait(ctx, err) || ranOutUnanswered(ctx, err, waitUntil)):
		// A MultiLock's wait ended (cutAt), or a RedLock's node timeout,
		// while this member's or node's call waited for the server: it ran
		// out unanswered, as this lock's own wait so cut off does, not a
		// deadline or cancellation of the caller's (observed as such).
		return nil, &NotAcquiredError{Name: s.name, Unanswered: true}
	case err != nil:
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, ErrNotReplicated) && !errors.Is(err, cerr) {
			// The call failed as ctx ended: report both.
			err = fmt.Errorf("wait ended: %w: %w", cerr, err)
		}
		return nil, opError("lock", s.name, badFence(wrongKind(err)))
	case !ok:
		if hl, isLeaser := p.(holderLeaser); isLeaser && !unanswered && remaining == 0 {
			// The refusals told of no lease (a LeanMutex's SET NX GET
			// answers the holder alone): read it once, as the wait gives up.
			remaining = hl.holderLease(ctx)
		}
		return nil, &NotAcquiredError{Name: s.name, Remaining: remaining, Unanswered: unanswered}
	}
	return lctx, nil
}

// grant records an acquisition in the Client's holds, arms its loss deadline,
// schedules watchdog renewal when there is no explicit lease, and builds the
// lock's context. A grant that arrives after Close began is refused
// (ErrClosed) and a re-entry of an unknown hold reported (errOrphan): the
// caller gives both back. mark is the re-entry's lease call (nil: none).
// setLease is the lease the attempt set on the server: serverLease, or
// longer for a re-entry of a hold the watchdog renews. kept: the caller
// keeps the grant (the failover guard's WAIT was acknowledged, always so
// unguarded, and ctx lives); a re-entry it gives back moves the owner's
// loss deadline only earlier and hands no hold to the watchdog.
func (c *Client) grant(ctx context.Context, p primitive, owner, field string, a attempt, lease, serverLease, setLease time.Duration, start time.Time, forceSeq uint64, shared bool, mark *leaseMark, kept bool) (context.Context, error) {
	s := p.spec()
	id := holdID(s.key, field)
	var fresh *freshHold
	if a.fresh {
		// Built before taking c.mu, which every Lock and Unlock of the
		// Client shares: the critical section is the registry update alone.
		// Set field by field: a composite literal of the 400-byte hold was
		// built on the stack and copied in with write barriers.
		fresh = &freshHold{}
		h := &fresh.h
		h.name, h.key, h.field = s.name, s.key, field
		h.side, h.prim, h.token, h.lease = p.side(), p, a.token, serverLease
		h.renew.index = -1
	}
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	if c.forcedSince(s.key, forceSeq) {
		c.mu.Unlock()
		return nil, errForcedGrant
	}
	h := c.holds[id]
	var stale *hold
	if h != nil && a.fresh {
		// A fresh acquisition while we still had a record: the old hold had
		// expired on the server without our noticing. Finish it as lost.
		c.unregisterLocked(id, h)
		stale, h = h, nil
	}
	if h == nil && !a.fresh {
		// A re-entry of a hold this Client does not know of: left by an
		// attempt whose reply was lost (an orphan, given back), or granted
		// to another goroutine of the same owner whose reply has not been
		// registered yet. While other attempts of the owner are in flight,
		// wait for one to register its grant, at most until ctx ends; this
		// one is not counted meanwhile, so attempts that all wait like this
		// stop waiting. Still unknown then, it is given back as an orphan.
		if c.inFlightLocked(id) > 1 {
			c.excludeLocked(id, 1)
			stop := context.AfterFunc(ctx, func() {
				c.mu.Lock()
				c.acquired.Broadcast()
				c.mu.Unlock()
			})
			for h == nil && c.inFlightLocked(id) > 0 && !c.closing && ctx.Err() == nil {
				c.acquired.Wait()
				h = c.holds[id]
			}
			stop()
			c.excludeLocked(id, -1)
		}
	}
	if h != nil && !a.fresh && p.side() == sideLean {
		// A LeanMutex counts no holds: the grant another goroutine of the
		// owner has just registered is the owner's one hold, not one more.
		c.mu.Unlock()
		return nil, fmt.Errorf("%w: the owner in the context already holds it", ErrNotReentrant)
	}
	var bound time.Time // an Extend or renewal of the owner's earlier hold in flight
	if h == nil {
		if !a.fresh {
			c.mu.Unlock()
			return nil, errOrphan
		}
		h = &fresh.h
		c.holds[id] = h
		if h.side == sideWrite {
			c.writeHold++
		}
		if e, ok := c.extending[id]; ok {
			bound = monoTime(e.at)
		}
		if at, ok := c.wd.orphanBound(id); ok && (bound.IsZero() || at.Before(bound)) {
			// A renewal of an ended hold of the owner in flight.
			bound = at
		}
		if u := c.unknownOf(id); u > 0 {
			// An Extend of an ended hold of the owner, of unknown outcome,
			// may run after this grant, and after any later call: the hold
			// counts with it as with one of its own (see unknownSent).
			h.unknownLease = u
			h.unknownEvery.Store(int64(u / 3))
			if at := lossDeadline(start, u); bound.IsZero() || at.Before(bound) {
				bound = at
			}
		}
		// A longer lease than the hold's was set (the owner's hold the
		// watchdog renewed ended as the attempt was sent): the hold's loss
		// deadline gives it back, as a stray renewal's lease.
		h.stray = !bound.IsZero() || setLease > serverLease
		if c.inFlightLocked(id) > 0 || c.excluding[id] > 0 {
			c.acquired.Broadcast() // a re-entry of the same owner may be waiting for this hold
		}
	}
	h.count++
	h.releasing.Store(false)
	if shared {
		h.shared.Store(true)
	}
	// A renewal sent while a re-entry was in flight may have run after it
	// on the server, setting the watchdog's lease again.
	renewed := h.renewing
	// The re-entry was sent before it found the watchdog renewing the
	// owner's hold (that hold's grant, or a re-entry without a lease that
	// handed it to the watchdog, was on its way), so it set its own shorter
	// lease on the server: the watchdog renews at once, not a third of its
	// lease from now.
	soon := renewed && !a.fresh && reentrySetsLease(p) && setLease < h.lease
	// A re-entry given back (no replica acknowledged it, or it outlived
	// its context) leaves a hold taken with a lease to that lease.
	renew := lease == 0 && !h.renewing && (a.fresh || kept)
	if renew {
		h.renewing = true
		h.lease = serverLease
	}
	c.mu.Unlock()
	if stale != nil {
		c.lost(stale, errGrantedAfresh) // logged, as a loss the watchdog finds
	}
	if renew {
		c.watchLater(h, start, s.cfg.watchdogEvery)
	}
	switch {
	case a.fresh:
		// Armed outside c.mu, which every Lock and Unlock of the Client
		// shares. An Extend or re-entry of the owner may have found the hold
		// since it was registered: it ran on the server after this grant,
		// and the deadline it set, or the bound it left on the unarmed hold
		// (see setLossLocked), is not moved later.
		at := lossDeadline(start, serverLease)
		if !bound.IsZero() && bound.Before(at) {
			// It may run on the server after this grant.
			at = bound
		}
		c.armFresh(h, at)
	case !reentrySetsLease(p):
		// The re-entry only lengthened the lock's expiry: it moves the
		// deadline later, and only when no Extend or renewal may have run
		// after it; never earlier. A read re-entry's own lease key is
		// recorded first: a release that leaves holds may delete another.
		if p.side() == sideRead {
			c.pushRead(h, start, lossDeadline(start, serverLease))
		}
		if !renewed && kept {
			c.armReply(h, mark, start, lossDeadline(start, serverLease), true)
		}
	case renewed:
		// A renewal may have run after the re-entry: the next ones move
		// the deadline on.
		c.armEarlier(h, lossDeadline(start, setLease))
		if soon {
			c.renewSoon(h)
		}
	case !kept:
		// The re-entry is given back. Without a replica's acknowledgement
		// only the primary has the lease it set: a failover promotes a
		// replica with the expiry of the hold's last acknowledged call,
		// which the context must not outlive. A shorter lease is in force
		// on the primary all the same.
		c.armEarlier(h, lossDeadline(start, setLease))
	default:
		c.armReply(h, mark, start, lossDeadline(start, setLease), false)
	}
	if renew && !a.fresh {
		// Handed to the watchdog by this re-entry. Another call of the
		// owner (an Extend, a re-entry with a lease) may have set a
		// shorter lease on the server after it, which the first renewal,
		// a third of the watchdog's lease from now, would not reach in
		// time: renew now.
		h.mu.Lock()
		early := h.watch == watchPending && h.lossAt.Load() < monoNanos(watchAt(h))
		h.mu.Unlock()
		if early {
			c.renewSoon(h)
		}
	}

	// The lock context's cancellable context is made lazily (lockCtx.lazy),
	// its state in the same allocation as the context.
	var lc *lockCtx
	var lazy *lazyCancel
	if fresh != nil && h == &fresh.h {
		lc, lazy = &fresh.lc, &fresh.lazy
	} else {
		lz := new(lazyLockCtx)
		lc, lazy = &lz.lc, &lz.lazy
	}
	if c.eagerLockCtx {
		lazy = nil
	}
	token := h.token
	if s.fence == "" || h.side == sideRead {
		// Drawn only to check releases (an unfenced LeanMutex, a read
		// hold's mark): not a Fence.
		token = 0
	}
	var cancel context.CancelCauseFunc // nil for a lazy one
	// lc is new, zeroed memory: set field by field rather than copied in
	// from a composite literal built on the stack.
	lc.owner, lc.name, lc.token, lc.hold = owner, s.name, token, h
	if lazy != nil {
		lc.Context, lc.lazy = ctx, lazy
	} else {
		lc.Context, cancel = context.WithCancelCause(ctx)
	}
	// A MultiLock's member context is the MultiLock's, not the caller's:
	// an Unlock by owner leaves it alone (untrackOwned).
	h.trackAs(lc, cancel, ctx.Value(multiMemberKey{}) == nil)
	return lc, nil
}

// freshHold allocates a new hold together with its first lock context and
// that context's lazy state.
type freshHold struct {
	h    hold
	lc   lockCtx
	lazy lazyCancel
}

// lazyLockCtx allocates a re-entry's lock context with its lazy state.
type lazyLockCtx struct {
	lc   lockCtx
	lazy lazyCancel
}

// watchLater schedules h's hand-over to the watchdog: its loss timer fires a
// tenth of the interval before the first renewal (start + every) falls due,
// so holds taken close together still share the first renewal's round trip
// (the watchdog batches renewals due within a tenth of the interval). The
// loss timer is armed by the caller right after (arm); a re-entry's hold is
// armed already, and its timer is brought forward here.
func (c *Client) watchLater(h *hold, start time.Time, every time.Duration) {
	h.mu.Lock()
	if h.watch == watchNone && !h.released() {
		h.watch = watchPending
		h.renew.due = start.Add(renewEvery(h, every))
		h.renew.every = every
		if h.loss != nil {
			// A re-entry without a lease of a hold armed for its own lease:
			// the timer serves the hand-over first. An RWMutex re-entry
			// only moves the deadline later, which arms nothing sooner,
			// and the hand-over would wait for the explicit lease's end.
			if w := watchAt(h); monoNanos(w) < h.lossAt.Load() {
				h.loss.t.Reset(time.Until(w))
			}
		}
	} else if h.watch == watchPending && !h.released() {
		// renewSoon came first: renewed now, then at this interval (the
		// hold's lease is the watchdog lease of p's handle).
		h.renew.every = every
	}
	h.mu.Unlock()
}

// watchNow hands a pending hold to the watchdog once its hand-over time has
// come, and re-arms its loss timer for the loss deadline. It reports whether
// it did; false when the timer fired for the loss deadline instead.
func (c *Client) watchNow(h *hold) bool {
	h.mu.Lock()
	if h.watch != watchPending || h.released() || time.Now().Before(watchAt(h)) {
		h.mu.Unlock()
		return false
	}
	h.watch = watchAdded
	due, every := h.renew.due, renewEvery(h, h.renew.every)
	if h.loss != nil {
		h.loss.t.Reset(time.Until(monoTime(h.lossAt.Load())))
	}
	h.mu.Unlock()
	// Ended meanwhile: add does nothing (end removes only after ending).
	c.wd.add(&h.renew, h, every, due.Add(-every), h.prim)
	return true
}

// renewSoon has the watchdog renew h now: a re-entry may have set a lease
// on the server shorter than the watchdog's, which its renewals, a third of
// that lease apart, would not reach in time. A hold not yet handed to the
// watchdog is handed over now (its grant's watchLater, should it come
// after, leaves it so).
func (c *Client) renewSoon(h *hold) {
	h.mu.Lock()
	if h.released() {
		h.mu.Unlock()
		return
	}
	if h.watch != watchAdded {
		if h.watch == watchNone {
			// Until its grant's watchLater sets the interval of the
			// handle that handed it over (whose lease it renews with).
			h.renew.every = h.prim.spec().cfg.watchdogEvery
		}
		h.watch = watchPending
		h.renew.due = time.Now()
		if h.loss != nil {
			// The timer hands it over (expired, watchNow); unarmed, the
			// grant's arming does (setLossLocked).
			h.loss.t.Reset(0)
		}
		h.mu.Unlock()
		return
	}
	h.mu.Unlock()
	c.wd.soon(&h.renew)
}

// besideLost bounds the owner's hold of id, if one is registered, by at:
// the loss deadline a re-entry of unknown outcome with lease, sent before
// that hold was registered, may have set on it (see acquire). That re-entry
// may also still run later, after calls of the hold sent since: as one sent
// once the hold was registered, it bounds them by lease (leaseUnknown). A
// hold the watchdog renews is renewed at once.
func (c *Client) besideLost(id holdKey, lease time.Duration, at time.Time) {
	c.mu.Lock()
	h := c.holds[id]
	renewing := h != nil && h.renewing
	c.mu.Unlock()
	if h == nil {
		return
	}
	c.leaseUnknown(h, lease, at)
	if renewing {
		c.renewSoon(h)
	}
}

// watchAt is when a pending hold is handed to the watchdog; h.mu held.
func watchAt(h *hold) time.Time { return h.renew.due.Add(-h.renew.every / 10) }

// armFresh arms a fresh hold's loss deadline from its grant, unless the hold
// has ended; if another call of the owner armed it first, it only moves the
// deadline earlier. Lock order: c.mu (when held) before h.mu.
func (c *Client) armFresh(h *hold, at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c.setLossLocked(h, at, h.loss != nil, false)
}

// armEarlier moves an armed hold's loss deadline to at if that is earlier.
func (c *Client) armEarlier(h *hold, at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c.setLossLocked(h, at, true, false)
}

// reentrySetsLease reports whether a re-entry sets the lock's expiry to its
// own lease, shortening it too (Mutex, FairMutex, as Redisson's RLock), or
// only lengthens it (RWMutex's read and write holds, as Redisson's
// RReadWriteLock).
func reentrySetsLease(p primitive) bool {
	s := p.side()
	return s != sideRead && s != sideWrite
}

// leaseCall marks a call that sets the lock's expiry, other than a renewal,
// as sent, moving the loss deadline to at first if that is earlier (zero:
// not known before the reply); the mark's end marks the call ended. See
// hold.leaseCalls.
func (c *Client) leaseCall(h *hold, at time.Time) *leaseMark {
	return c.leaseCallKeeping(h, at, false)
}

// keepsRenewedLease reports whether a re-entry or a re-entrant release of a
// hold the watchdog renews leaves the lock no shorter than a renewal does: a
// Mutex's and FairMutex's set at least the watchdog's lease (see acquire),
// an RWMutex write re-entry only lengthens the lock and a write release
// that leaves holds sets the hold's lease or a longer read lease. A read
// re-entry only lengthens the lock and adds a lease key of its own; a read
// release that leaves holds deletes the owner's last key and sets the lock
// to the longest key left, which may be shorter than the lock was, but
// never shorter than the owner's first key: neither touches that key,
// which a renewal sets to the watchdog's lease (and which bounds the lock
// and hold.reads[0] alike), so a renewal beside them still confirms it.
func keepsRenewedLease(s side) bool {
	return s == sideExclusive || s == sideWrite || s == sideRead
}

// leaseCallKeeping is leaseCall; keeps: the call sets no shorter lease than
// the watchdog's renewals of h do (see keepsRenewedLease), so a renewal it
// overlaps still confirms that lease from when the renewal was sent,
// whichever ran last: it is counted in keepCalls, not in leaseCalls. Else a
// hold re-entered without pause had every renewal taken as overtaken, and
// was lost with its lease.
func (c *Client) leaseCallKeeping(h *hold, at time.Time, keeps bool) *leaseMark {
	h.mu.Lock()
	// Calls that keep the lease still overlap one another: one of them
	// sent earlier may run on the server after this one and set a
	// shorter lease than this one's reply reports (a read release that
	// deletes the longest key another one's reply reported as left), so
	// this one is solo only with no call of either kind in flight.
	// A renewal in flight may run after it too (see renewalSent).
	m := &leaseMark{h: h, overlapped: h.leaseCalls+h.keepCalls+h.renewCalls > 0, keeps: keeps}
	if keeps {
		h.keepCalls++
	} else {
		h.leaseCalls++
	}
	h.leaseSeq++
	m.seq = h.leaseSeq
	h.mu.Unlock()
	if !at.IsZero() {
		c.armEarlier(h, at)
	}
	if hook := c.leaseMarkHook.Load(); hook != nil {
		(*hook)()
	}
	return m
}

// leaseMark is one call that sets a hold's lock expiry (see leaseCall).
type leaseMark struct {
	h          *hold
	seq        uint64 // h.leaseSeq when it was sent
	overlapped bool   // another such call was in flight when it was sent
	keeps      bool   // see leaseCallKeeping
}

// end marks the call ended.
func (m *leaseMark) end() {
	m.h.mu.Lock()
	if m.keeps {
		m.h.keepCalls--
		m.h.mu.Unlock()
		return
	}
	m.h.leaseCalls--
	m.h.leaseSettled = monoNow()
	m.h.mu.Unlock()
}

// armReply moves h's loss deadline for the reply of the call marked m (see
// soloOn), sent at sent: to at when m is solo on h (only later, with
// laterOnly: a call that only lengthens the lock's expiry), else only
// earlier (with laterOnly, not at all); within the lease of an Extend of
// unknown outcome (see leaseUnknown). The check and the arming are one
// critical section: a call sent between them would have its earlier
// deadline, set as it was sent, overwritten.
func (c *Client) armReply(h *hold, m *leaseMark, sent, at time.Time, laterOnly bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	at = unknownBound(h, sent, at)
	switch {
	case m.soloOn(h):
		c.setLossLocked(h, at, false, laterOnly)
	case !laterOnly:
		c.setLossLocked(h, at, true, false)
	}
}

// soloOn reports, with h.mu held, whether no other call setting h's lock
// expiry has overlapped the one marked m so far: none was in flight when it
// was sent, and none has been sent since. Only then is the lease it set
// known to be the one in force; otherwise the server may have run the other
// call last. A re-entry sent before h was registered here (m nil, or m on
// an earlier hold) has no mark on h: every call that has set h's expiry
// since h was registered may have run on the server after it, so it is solo
// only while there was none.
func (m *leaseMark) soloOn(h *hold) bool {
	if m != nil && m.h == h {
		return !m.overlapped && h.leaseSeq == m.seq
	}
	return h.leaseSeq == 0
}

// setLossLocked sets the loss deadline to at, or only moves it earlier
// (earlierOnly) or later (laterOnly); h.mu held.
func (c *Client) setLossLocked(h *hold, at time.Time, earlierOnly, laterOnly bool) {
	if h.released() {
		return
	}
	if h.reads != nil && !laterOnly {
		// Every read lease key of the owner: a renewal or Extend sets them
		// all, a bound applies to them all. A re-entry (laterOnly) sets
		// only its own key (see pushRead).
		n := monoNanos(at)
		switch {
		case earlierOnly:
			for i, d := range h.reads {
				if n < d {
					h.reads[i] = n
				}
			}
		case h.loss != nil:
			for i := range h.reads {
				h.reads[i] = n
			}
		default:
			// The fresh grant's arming: its own key, the first, within the
			// bound its owner's calls left on it.
			if cur := h.lossAt.Load(); cur != 0 && cur < n {
				n = cur
			}
			h.reads[0] = n
		}
	}
	cur := h.lossAt.Load()
	if h.loss == nil {
		// Not armed yet: a fresh hold between its registration and its
		// grant's arming, which an Extend or re-entry of its owner may have
		// found already. Their bound is kept for that arming, which must not
		// set the deadline past the shorter lease they set on the server.
		if earlierOnly {
			if cur == 0 || monoNanos(at) < cur {
				h.lossAt.Store(monoNanos(at))
			}
			return
		}
		if cur != 0 && cur < monoNanos(at) {
			at = monoTime(cur)
		}
	} else if earlierOnly && monoNanos(at) >= cur || laterOnly && monoNanos(at) <= cur {
		return
	}
	h.lossAt.Store(monoNanos(at))
	if h.watch == watchPending {
		// The timer serves the hand-over to the watchdog first.
		if w := watchAt(h); w.Before(at) {
			at = w
		}
	}
	d := time.Until(at)
	if h.loss == nil {
		// Timers are reused: most holds end long before their deadline.
		lt, _ := c.lossTimers.Get().(*lossTimer)
		if lt == nil {
			lt = &lossTimer{}
			lt.h.Store(h)
			lt.t = time.AfterFunc(d, func() {
				if !c.timerStart() {
					return
				}
				defer c.timerDone()
				if h := lt.h.Load(); h != nil {
					c.expired(h)
				}
			})
		} else {
			lt.h.Store(h)
			lt.t.Reset(d)
		}
		h.loss = lt
		return
	}
	h.loss.t.Reset(d)
}

// reportGuard calls Guard, which runs while the acquisition holds a grant it
// has yet to register: a panic is logged, not let through.
func (c *Client) reportGuard(o Observer, e GuardEvent) {
	observerCall(c.log, "Guard", func() { o.Guard(e) })
}

// lossTimer is a hold's loss timer, reused by later holds once stopped.
type lossTimer struct {
	t *time.Timer
	h atomic.Pointer[hold] // the hold it watches
}

// renewed records a confirmed renewal sent at sent.
// A call setting the lock's expiry that was in flight, or ended, after the
// renewal was sent may have run on the server after it: then its lease may
// be the one in force, and the renewal only moves the deadline earlier.
func (c *Client) renewed(h *hold, sent time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	stale := h.leaseCalls > 0 || monoNanos(sent) <= h.leaseSettled
	c.setLossLocked(h, unknownBound(h, sent, lossDeadline(sent, h.lease)), stale, false)
}

// leaseUnknown records an Extend of h with lease, whose loss deadline is at,
// as one of unknown outcome (an error without an answer: its context ended,
// its connection broke or stalled, a panic), or such a re-entry of h that
// sets its own lease (its undo looks for it only for a few seconds: see
// undoLater): its script may have run, or may still run, at any time, even
// after calls sent later and answered. A cancelled call is let go by
// rueidis whether or not the server has read it (a guarded one even before
// it is written: sendBounded), and nothing tells when it can no longer run.
// The deadline moves to at now if that is earlier, and for the rest of the
// hold's life every later call moves it no further than lease from its own
// sending (unknownBound): should the late script run after that call, it
// runs after that call was sent, and sets lease from then on. Without this
// a later Extend with a longer lease, run first on another connection,
// moved the deadline to its own lease, and the lock context outlived the
// shorter lease the first call then set.
//
// The watchdog renews such a hold (handed to it before or after) at least
// every third of lease: each renewal moves the deadline only that far.
func (c *Client) leaseUnknown(h *hold, lease time.Duration, at time.Time) {
	h.mu.Lock()
	shorter := h.unknownLease == 0 || lease < h.unknownLease
	if shorter {
		h.unknownLease = lease
		h.unknownEvery.Store(int64(lease / 3))
	}
	c.setLossLocked(h, at, true, false)
	added := shorter && h.watch == watchAdded && !h.released()
	h.mu.Unlock()
	if added {
		// Its next renewal may be due past the new deadline.
		c.wd.soon(&h.renew)
	}
}

// renewEvery is how often the watchdog renews h, whose renewal interval is
// every: at least every third of the lease of a call of unknown outcome
// (see leaseUnknown).
func renewEvery(h *hold, every time.Duration) time.Duration {
	if u := time.Duration(h.unknownEvery.Load()); u > 0 && u < every {
		return u
	}
	return every
}

// unknownBound is at, or the deadline the shortest lease of an Extend of h
// of unknown outcome gives a call sent at sent, when that is earlier (see
// leaseUnknown); h.mu held.
func unknownBound(h *hold, sent, at time.Time) time.Time {
	if h.unknownLease > 0 {
		if b := lossDeadline(sent, h.unknownLease); b.Before(at) {
			return b
		}
	}
	return at
}

// renewalSent moves h's loss deadline, before a renewal sent at sent goes
// out, to the lease that renewal sets: it sets h.lease as soon as it runs,
// and its reply may be slow or lost. A longer lease may be in force until
// then, which the renewal cuts short: an RWMutex hold taken with a lease and
// handed to the watchdog by a re-entry without one (a re-entry there only
// lengthens the lock; a read renewal sets every read lease key of the owner,
// a write renewal the lock), or a read re-entry's longer lease key that a
// read release reported as left.
//
// The renewal also overlaps every call setting the lock's expiry that is in
// flight or sent before its reply: it may run on the server after one, and
// cut a longer read lease key that call's reply reports as left (see
// leftHeld), so that reply cannot move the loss deadline later.
func (c *Client) renewalSent(h *hold, sent time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.renewCalls++
	h.leaseSeq++
	c.setLossLocked(h, lossDeadline(sent, h.lease), true, false)
}

// renewalDone ends a renewal marked by renewalSent.
func (c *Client) renewalDone(h *hold) {
	h.mu.Lock()
	h.renewCalls--
	h.mu.Unlock()
}

// errRefusedReentry: a re-entry of the owner found the owner's hold gone from
// the lock (another owner holding it, or a free lock with others in line).
var errRefusedReentry = errors.New("a re-entry of its owner found its hold gone from the lock")

// refusedReentry ends h, the owner's hold a shared re-entry was sent
// beside, when the re-entry of a Mutex, FairMutex or RWMutex side was
// refused: the lock holds one owner's field at a time, so the owner held
// nothing on the server when the script ran. A FairMutex also refuses when
// the lock is free and others are queued ahead (either queue protocol), but
// only after finding no lock hash at all, so that refusal proves the same.
// An RWMutex grants a re-entry of either side whenever the owner's field of
// that side is there (in write mode only the writer reads, in read mode
// nobody writes), so its refusal proves that hold gone too, as does a write
// re-entry's ErrUpgrade (read mode, the owner reading). So does a re-entry
// refused for its fencing-token counter (BAD_FENCE): the scripts draw a
// token only for a lock they found free. h is kept when
// it is no longer the owner's registered hold, or a release of its last hold
// is under way (which may have run first).
func (c *Client) refusedReentry(p primitive, h *hold) {
	switch p.(type) {
	case *Mutex, *FairMutex, *rwSide:
	default:
		return
	}
	c.mu.Lock()
	gone := c.holds[holdID(h.key, h.field)] == h && h.lastReleases == 0 && !h.releasing.Load()
	c.mu.Unlock()
	if gone {
		c.lost(h, errRefusedReentry)
	}
}

// expired is the loss timer: no grant or renewal was confirmed in time.
func (c *Client) expired(h *hold) {
	if c.watchNow(h) {
		return
	}
	c.lossPassed(h, false)
}

// lossPassed ends h as lost if its loss deadline has passed, and gives back
// what a renewal or re-entry may have extended. onlyOurs: do nothing more once
// another call has ended it (its loss timer, firing meanwhile, gives back).
func (c *Client) lossPassed(h *hold, onlyOurs bool) {
	if c.monoClock() < h.lossAt.Load() || h.released() {
		return // re-armed while the timer fired, or already ended
	}
	c.mu.Lock()
	renewing := h.renewing || h.stray
	stray := h.stray
	reads := c.readsBesideLocked(h)
	c.mu.Unlock()
	h.mu.Lock()
	// Only the confirmed grant set the lock's expiry: no renewal, Extend,
	// re-entry or release that leaves holds was ever sent for it (nor, by
	// stray, for an earlier hold of the owner, nor, by reads, for a read
	// hold of the owner beside a write hold).
	granted := h.leaseSeq == 0 && h.leaseCalls == 0 && !reads
	h.mu.Unlock()
	// Logged and reported once what the lock may still hold is being given
	// back (below): a log sink that stalls must not keep it held by nobody.
	report := c.lostLater(h, errLeaseExpired)
	defer report.run()
	if onlyOurs && report.log == nil {
		return
	}
	if !renewing && granted {
		// An explicit lease running out before Unlock (Redisson's
		// lock(leaseTime) used as the release): the server lease is the one
		// the grant set, which ends a margin after this deadline. Nothing
		// can have extended it, so there is nothing to give back, and
		// releasing it here would free the lock before that lease.
		return
	}
	// A renewal still in flight may yet extend the lease on the server for a
	// hold that has now ended here: give it back once the server answers.
	// The owner may lock again meanwhile (shared, or by the id read from the
	// hold's context), and the server grant it before the Client registers
	// it: name the ended hold's token, so the undo cannot release the owner's
	// next hold (see hold.renewToken).
	token := h.renewToken()
	if _, lean := h.prim.(undoMarker); lean && token == 0 {
		// An unfenced LeanMutex hold that drew no token: the undo reads
		// what its releases name first (see LeanMutex.undoMark).
		token = leanMarkUnread
	}
	// A stray hold's lock may have a longer lease than its own: a renewal of
	// an earlier hold of the owner, or a re-entry of one the watchdog
	// renewed that was granted afresh (see grant), set the watchdog's.
	// Until that lease is over, the lock is worth giving back.
	until := h.lease
	if stray || reads {
		until = max(until, h.prim.spec().cfg.watchdogLease)
	}
	c.undoLater(h.prim, h.field, h.lease, time.Now().Add(until), token)
}

// readsBesideLocked reports, for an RWMutex write hold h, whether its owner
// reads the same lock on this Client (a read hold registered, or a read
// acquisition in flight); c.mu held. A read grant in write mode raises the
// lock's expiry to the read lease (RwReadAcquire), and the read's renewals
// keep it there: left to the server, the lock stayed in write mode past the
// write hold's lease, shutting other readers and writers out while the read
// holds lived and for the rest of that expiry after their release. Given
// back as its lease ends, the write hold leaves the lock to the read holds.
func (c *Client) readsBesideLocked(h *hold) bool {
	if h.side != sideWrite {
		return false
	}
	id := holdID(h.key, strings.TrimSuffix(h.field, ":write"))
	if r := c.holds[id]; r != nil && r.side == sideRead {
		return true
	}
	return c.inFlightLocked(id) > 0
}

// leavingLine is what a panic logged in a wait's background leave of its
// line was in.
const leavingLine = "leaving the line of a wait that gave up"

// background runs f in a goroutine Close waits for, unless Close has begun
// (then it reports false and does nothing).
func (c *Client) background(f func()) bool {
	if !c.own() {
		return false
	}
	go func() {
		defer c.wg.Done()
		f()
	}()
	return true
}

// own counts a goroutine the caller starts among those Close waits for,
// unless the Client is closing (false); the goroutine calls c.wg.Done.
func (c *Client) own() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return false
	}
	c.wg.Add(1)
	return true
}

var (
	errLeaseExpired = errors.New("lease ran out without a confirmed renewal")
	// errLeaseEnded: an explicit lease ran out before Unlock, which observers
	// report as an expiry rather than a loss.
	errLeaseEnded = errors.New("explicit lease ran out")
)

// lost reports a hold that is no longer held (the watchdog's finding or the
// loss deadline).
func (c *Client) lost(h *hold, why error) { c.lostLater(h, why).run() }

// lossReport is what remains to be done for a hold that lostLater ended:
// log is its log record, end its HoldEnd (nil: none).
type lossReport struct{ log, end func() }

// run logs the loss, then reports the hold's end.
func (r lossReport) run() {
	if r.log != nil {
		r.log()
	}
	if r.end != nil {
		r.end()
	}
}

// queued is r as the reporter's entries, in run's order.
func (r lossReport) queued(out []queuedReport) []queuedReport {
	if r.log != nil {
		out = append(out, queuedReport{f: r.log, kind: reportLog})
	}
	if r.end != nil {
		out = append(out, queuedReport{f: r.end, kind: reportHoldEnd})
	}
	return out
}

// lostLater is lost, its log record and HoldEnd left to the lossReport it
// returns: the watchdog ends every hold a round found gone before it reports
// any, so that a slow Observer keeps no owner under a lock found lost.
func (c *Client) lostLater(h *hold, why error) lossReport {
	if h.released() {
		return lossReport{}
	}
	cause := ErrLockLost
	if why != nil {
		cause = fmt.Errorf("%w: %w", ErrLockLost, why)
	}
	c.mu.Lock()
	renewing := h.renewing
	c.mu.Unlock()
	// An explicit lease running out before Unlock is what it is for.
	ended := !renewing && errors.Is(why, errLeaseExpired)
	if ended {
		cause = fmt.Errorf("%w: %w", ErrLockLost, errLeaseEnded)
	}
	c.mu.Lock()
	c.forgetLocked(h)
	c.mu.Unlock()
	obs := c.endUnreported(h, cause)
	h.mu.Lock()
	ours := h.cause == cause
	h.mu.Unlock()
	// Logged once the hold has ended (if this call ended it), with its
	// report: a log sink that stalls (a pipe nobody reads) must not keep
	// the owner working under a lock that is gone, or past its lease, nor
	// the owners of the other holds a renewal round found gone.
	var r lossReport
	switch {
	case !ours:
	case ended:
		r.log = func() { c.log.Debug("lock lease ended", "lock", h.name, "key", h.key) }
	default:
		r.log = func() { c.log.Warn("lock lost", "lock", h.name, "key", h.key, "reason", why.Error()) }
	}
	if obs != nil {
		r.end = func() { obs.ended(cause) }
	}
	return r
}

// finish forgets a hold everywhere (registry, watchdog, loss timer) and ends
// its contexts with cause.
func (c *Client) finish(h *hold, cause error) {
	c.mu.Lock()
	c.forgetLocked(h)
	c.mu.Unlock()
	c.end(h, cause)
}

// end ends a hold that is no longer in the registry: its contexts, then its
// loss timer and renewal. Ended first: an arm or a watchdog add racing with
// end then sees the hold ended and does nothing.
func (c *Client) end(h *hold, cause error) {
	if obs := c.endUnreported(h, cause); obs != nil {
		obs.ended(cause) // last: the hold is finished whatever the Observer does
	}
}

// endReleased is end for a hold its owner's release let go (ctx is the
// release's): one a lost MultiLock or RedLock gave back is reported ended
// by that loss (EndLost), not by an Unlock.
func (c *Client) endReleased(ctx context.Context, h *hold, cause error) {
	obs := c.endUnreported(h, cause)
	if obs == nil {
		return
	}
	if cause == context.Canceled && ctx.Value(givenBackKey{}) != nil {
		cause = errGivenBack
	}
	obs.ended(cause) // last: the hold is finished whatever the Observer does
}

// endUnreported is end without the report of the hold's end, which it
// returns the observer for (nil for none).
func (c *Client) endUnreported(h *hold, cause error) *holdObs {
	obs := h.end(cause)
	h.mu.Lock()
	lt := h.loss
	h.loss = nil // taken once: a second end must not stop a timer reused since
	watched := h.watch == watchAdded
	h.mu.Unlock()
	// Reusable only when stopped before firing: a fired timer's function may
	// still be running with this hold.
	if lt != nil && lt.t.Stop() {
		lt.h.Store(nil)
		c.lossTimers.Put(lt)
	}
	if watched {
		if bound := c.wd.remove(&h.renew); !bound.IsZero() {
			// A renewal of h in flight may run on a hold of its owner
			// registered since (see watchdog.orphans).
			c.mu.Lock()
			if next := c.holds[holdID(h.key, h.field)]; next != nil && next != h {
				c.armEarlier(next, bound) // lock order: c.mu before h.mu
			}
			c.mu.Unlock()
		}
	}
	return obs
}

// forceUnlock runs a ForceUnlock script through call and ends this
// Client's holds of the lock (forced). The script records its answer under a
// record key drawn once and kept for every repeat, and the call is made
// again as a recorded call is (callRecorded): a repeat after a lost reply
// answers what the first attempt did and deletes nothing, since by then the
// lock may be another owner's (a woken waiter takes it at once).
// The holds of the sides the script deletes end before it is sent: once it
// runs, another owner may be granted the lock before its reply is back, or
// when the reply is lost and the call fails.
func (c *Client) forceUnlock(ctx context.Context, key string, sides sideSet, call deletion) (bool, error) {
	c.markForcing(key, +1)
	defer c.markForcing(key, -1)
	c.forcedSides(key, sides)
	ok, err := c.deleteRecorded(ctx, "redisson_unlock_latch", key, call)
	if ok {
		c.forced(key)
	}
	return ok, mayHaveRun(err, "the lock may have been deleted; forcing again may delete a lock taken since")
}

// forceMark is a lock key's entry in Client.forcing.
type forceMark struct {
	n    int    // ForceUnlocks in flight
	last uint64 // forceSeq as the last of them began or ended
	at   int64  // when the last one ended (monoNanos)
}

// markForcing marks a ForceUnlock of key as begun (+1) or ended (-1).
// Ended entries are dropped a minute on (forcePruned keeps their mark), also
// as acquisitions end (sweepUndoLatches), and all at once whenever no
// acquisition is in flight (pruneForcing).
func (c *Client) markForcing(key string, d int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := monoNow()
	if d > 0 {
		c.dropEndedForcingLocked(now)
		if c.forcing == nil {
			c.forcing = map[string]forceMark{}
		}
	}
	e := c.forcing[key]
	e.n += d
	e.last = c.forceSeq.Add(1)
	e.at = now
	c.forcing[key] = e
	c.forceActive.Add(int32(d))
	if d < 0 {
		c.pruneForcingLocked()
	}
	c.forceKept.Store(int32(len(c.forcing)))
}

// dropEndedForcingLocked drops, with c.mu held, the ForceUnlock marks ended
// a minute before now, whatever is in flight: forcePruned keeps their mark,
// so an attempt older than one still gives its grant back.
func (c *Client) dropEndedForcingLocked(now int64) {
	for k, e := range c.forcing {
		if e.n == 0 && now-e.at > int64(time.Minute) {
			c.forcePruned = max(c.forcePruned, e.last)
			delete(c.forcing, k)
		}
	}
}

// pruneForcing drops the ended ForceUnlock marks once no acquisition is in
// flight (see pruneForcingLocked); leave calls it as the last one ends.
func (c *Client) pruneForcing() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pruneForcingLocked()
	c.forceKept.Store(int32(len(c.forcing)))
}

// pruneForcingLocked drops, with c.mu held, every ended ForceUnlock mark
// when no acquisition is in flight: the marks serve only attempts in flight
// (forcedSince), and one that enters later reads a forceSeq at or past every
// mark's. Without it the marks of a busy minute stayed after the last
// ForceUnlock for good, one per lock name.
func (c *Client) pruneForcingLocked() {
	if c.inflight.n.Load() != 0 {
		return
	}
	for k, e := range c.forcing {
		if e.n == 0 {
			c.forcePruned = max(c.forcePruned, e.last)
			delete(c.forcing, k)
		}
	}
}

// forcedSince reports, with c.mu held, whether a ForceUnlock of key by this
// Client may have run on the server after an attempt that began when
// forceSeq read seq: one was in flight, or began or ended, since. Its script
// may have deleted the attempt's grant before the grant was registered,
// where forced found no hold to end.
func (c *Client) forcedSince(key string, seq uint64) bool {
	if c.forceActive.Load() == 0 && c.forceSeq.Load() == seq {
		return false
	}
	e := c.forcing[key]
	return e.n > 0 || e.last > seq || c.forcePruned > seq
}

// errForcedGrant: a ForceUnlock of this Client may have deleted the grant
// (forcedSince), which the acquisition gives back before trying again.
var errForcedGrant = errors.New("the lock was force-unlocked as it was granted")

// awaitForcing waits, bounded by ctx and by Close, until no ForceUnlock of
// key by this Client is in flight.
func (c *Client) awaitForcing(ctx context.Context, key string) {
	for c.forceActive.Load() > 0 && ctx.Err() == nil && c.closingCtx.Err() == nil {
		c.mu.Lock()
		n := c.forcing[key].n
		c.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-ctx.Done():
		case <-c.closingCtx.Done():
		case <-time.After(time.Millisecond):
		}
	}
}

// sideSet is a set of sides (1 << side each).
type sideSet uint8

func sidesOf(ss ...side) sideSet {
	var set sideSet
	for _, s := range ss {
		set |= 1 << s
	}
	return set
}

// deletion is a recorded deletion's script call (deleteRecorded): record is
// its reserved record key, slack how long the reservation may outlast the
// caller's deadline, which the script allows for.
type deletion func(ctx context.Context, record, publish string, slack time.Duration) (bool, error)

// deleteRecorded runs a deletion that records its answer (ForceUnlock, the
// Delete of a semaphore or latch) under a record key named by prefix and
// key, reserved first (reservedCall, with RecordReserve: a deletion runs on
// a full server), and makes it again as a recorded call is (callRecorded).
func (c *Client) deleteRecorded(ctx context.Context, prefix, key string, call deletion) (bool, error) {
	v, err := c.reservedCall(ctx, prefix, key, true, generated.RecordReserve, func(ctx context.Context, record, publish string, slack time.Duration) (int64, error) {
		ok, err := call(ctx, record, publish, slack)
		if ok {
			return 1, err
		}
		return 0, err
	})
	return err == nil && v == 1, err
}

// reservedCall runs a call that records its answer under a record key named
// by prefix and key, drawn once and kept for every repeat, and makes it again
// as a recorded call is (callRecorded, refusals as there). The record is
// reserved first through reserve, for as long as this call waits: a call
// held up on its way and reaching the server after the caller gave up would
// change what is there by then (delete a lock or count taken since, drain
// permits released since); it finds no record and changes nothing (LATE). A
// LATE answered while the call still waits (a failover or restart lost the
// reservation; the call ran nothing) is made again with a new record, up to
// three times in all. A call Redis refuses leaves no reservation behind.
func (c *Client) reservedCall(ctx context.Context, prefix, key string, refusals bool,
	reserve func(ctx context.Context, c rueidis.Client, record string, ttl time.Duration) (bool, error),
	call func(ctx context.Context, record, publish string, slack time.Duration) (int64, error)) (int64, error) {
	// callRecorded's bound, known here for the reservation's life.
	ctx, cancel := c.recordBound(ctx)
	defer cancel()
	deadline, _ := ctx.Deadline()
	for attempt := 1; ; attempt++ {
		record := c.recordKey(prefix, key)
		// Each attempt reserves for as long as the call waits from when it is
		// sent; reaching the server later, it lasts past the deadline by that
		// much, at most the time from the first send to the reply, and by the
		// TTL's rounding up to the millisecond (slack). The call runs only
		// with that much of the reservation left: sooner than the deadline.
		first := time.Now()
		_, err := c.callRecordedBool(ctx, refusals, func(ctx context.Context, _ string) (bool, error) {
			return reserve(ctx, c.rc, record, max(time.Until(deadline), time.Millisecond))
		})
		if err != nil {
			// The change was never sent, whatever became of the reservation
			// (it expires as the caller stops waiting).
			if !replied(err) {
				err = ranNothing{err} // a dial error, or one maybeRan marks, too: mayHaveRun leaves it
			}
			return 0, err
		}
		if c.testReserved != nil {
			c.testReserved()
		}
		slack := time.Since(first) + time.Millisecond
		v, err := c.callRecorded(ctx, refusals, func(ctx context.Context, publish string) (int64, error) {
			return call(ctx, record, publish, slack)
		})
		if err != nil && replied(err) && !errors.Is(err, generated.ErrLate) {
			// Refused (another kind of lock holds the name): such a call
			// leaves nothing behind, not even its reservation. Best effort:
			// left there, it expires as the caller stops waiting.
			_, _ = generated.RecordUnreserve(ctx, c.rc, record)
		}
		if !errors.Is(err, generated.ErrLate) || ctx.Err() != nil || attempt == 3 {
			return v, err
		}
	}
}

// forced ends this Client's holds of the lock at key after a ForceUnlock
// deleted it: their owners no longer hold it, so their contexts end
// (ErrLockLost) and their renewals stop now, not at the next renewal or at
// the lease's end (Redisson's forceUnlock also stops its own renewals).
func (c *Client) forced(key string) { c.forcedSides(key, ^sideSet(0)) }

// forcedSides is forced for the holds of the given sides alone.
func (c *Client) forcedSides(key string, sides sideSet) {
	// Counted as a loss timer's run: Close waits for the ends reported here.
	// Once Close has ended every hold, none is left to end.
	if !c.timerStart() {
		return
	}
	defer c.timerDone()
	var hs []*hold
	c.mu.Lock()
	for id, h := range c.holds {
		if id.key == key && sides&(1<<h.side) != 0 {
			hs = append(hs, h)
		}
	}
	for _, h := range hs {
		c.forgetLocked(h)
	}
	c.mu.Unlock()
	if c.testHookForced != nil && len(hs) > 0 {
		c.testHookForced()
	}
	// Every hold ends before the Observer hears of any (and before the
	// script is sent): a slow HoldEnd must not leave the others live.
	cause := fmt.Errorf("%w: %w", ErrLockLost, errForced)
	obs := make([]*holdObs, 0, len(hs))
	for _, h := range hs {
		if o := c.endUnreported(h, cause); o != nil {
			obs = append(obs, o)
		}
	}
	for _, h := range hs {
		// Lost as any other loss is: logged once every hold has ended,
		// each that this call ended (not one a release ended first).
		h.mu.Lock()
		ours := h.cause == cause
		h.mu.Unlock()
		if ours {
			c.log.Warn("lock lost", "lock", h.name, "key", h.key, "reason", errForced.Error())
		}
	}
	for _, o := range obs {
		o.ended(cause)
	}
}

var errForced = errors.New("the lock was force-unlocked")

// errNoLeaseLeft: a release of one hold deleted the lock, as none of the
// owner's other holds had a lease left on the server.
var errNoLeaseLeft = errors.New("the release left no lease on the server")

func (c *Client) forgetLocked(h *hold) {
	if id := holdID(h.key, h.field); c.holds[id] == h {
		c.unregisterLocked(id, h)
	}
}

// unregisterLocked takes h, registered as id, out of the registry; c.mu held.
func (c *Client) unregisterLocked(id holdKey, h *hold) {
	delete(c.holds, id)
	if h.side == sideWrite {
		c.writeHold--
	}
}

// ofOtherKind reports whether h, the owner's hold of p's key and field, is of
// another kind than p: a Mutex's or FairMutex's and an RWMutex reader's share
// the field, yet a name is held as one kind at a time, so the owner holds
// nothing of p's kind. Giving it back through p would run p's release on the
// other kind's lock.
func ofOtherKind(h *hold, p primitive) bool { return h != nil && h.side != p.side() }

// holdOf finds the local hold the owner in ctx has on p, and that owner's
// field; ok is false when ctx names no owner. The hold may be of another kind
// (see ofOtherKind).
func (c *Client) holdOf(ctx context.Context, p primitive) (h *hold, field string, ok bool) {
	s := p.spec()
	var owner string
	if lc, isLock := ctx.(*lockCtx); isLock {
		owner, ok = lc.owner, true // the common case, without boxing the owner
	} else {
		owner, ok = OwnerFrom(ctx)
	}
	if !ok {
		return nil, "", false
	}
	// Only a hold of this Client: another Client's lock context names an
	// owner of that Client, a different one here (owners are
	// <client-id>:<owner-id>), and its hold is that Client's to release.
	if lc, _ := ctx.Value(lockCtxKey{}).(*lockCtx); lc != nil && lc.hold != nil && lc.hold.key == s.key && lc.hold.side == p.side() && owner == lc.owner && lc.hold.prim.spec().c == c {
		return lc.hold, lc.hold.field, true
	}
	field = c.fieldOf(p, owner)
	c.mu.Lock()
	h = c.holds[holdID(s.key, field)]
	c.mu.Unlock()
	return h, field, true
}

// unlock releases one hold of the owner in ctx. It runs detached from ctx,
// bounded by the release timeout, so a cancelled request still releases its
// lock. A release that fails for good drops the hold here (no renewal, its
// contexts end with ErrLockLost) and lets the lease run out on the server.
// A ctx that names no owner holds nothing: ErrNotHeld, and Redis is not asked.
func (c *Client) unlock(ctx context.Context, p primitive) error {
	if c.observing(ctx) {
		return c.observeRelease(ctx, opOf(p), func(ctx context.Context) error { return c.unlock(ctx, p) })
	}
	s := p.spec()
	if ctx == nil {
		return opError("unlock", s.name, invalidf("nil context"))
	}
	h, field, ok := c.holdOf(ctx, p)
	if !ok {
		return fmt.Errorf("scriptlock: unlock %q: %w (the context names no owner: pass the context Lock returned)", s.name, ErrNotHeld)
	}
	if err := checkOwner(ctx, p); err != nil {
		return opError("unlock", s.name, err)
	}
	lease := s.serverLease(s.cfg.lease)
	rctx, began := c.releaseContextAt(ctx, s.cfg.releaseTimeout, h)
	if h == nil {
		h = c.awaitOwnersGrant(rctx, ctx, holdID(s.key, field))
	}
	if ofOtherKind(h, p) {
		return fmt.Errorf("scriptlock: unlock %q: %w (the owner holds it as another kind of lock)", s.name, ErrNotHeld)
	}
	last := false
	lastOut := false // h.lastReleases counts this release
	keeps := false   // the release sets the watchdog's lease (see leaseCallKeeping)
	if h != nil {
		id := holdID(s.key, field)
		c.mu.Lock()
		if h.released() && ((c.holds[id] != nil && c.holds[id] != h) || c.inFlightLocked(id) > 0) {
			// An ended hold whose owner holds (or is acquiring) the lock
			// anew under the same field: releasing by owner would give up
			// that newer hold.
			c.mu.Unlock()
			return fmt.Errorf("scriptlock: unlock %q: %w", s.name, ErrNotHeld)
		}
		if h.count <= 1 && c.inFlightLocked(id) > 0 && ctx.Value(inAcquireKey{}) == nil {
			// A goroutine sharing the owner is re-entering: its hold may be
			// on the server already, and giving up the owner's last hold
			// would take it too. Wait (bounded by the release timeout) for
			// it to register or fail.
			stop := context.AfterFunc(rctx, func() {
				c.mu.Lock()
				c.acquired.Broadcast()
				c.mu.Unlock()
			})
			for c.inFlightLocked(id) > 0 && rctx.Err() == nil {
				c.acquired.Wait()
			}
			stop()
		}
		lease = h.lease // Extend changes it under c.mu
		// It sets the watchdog's lease, as a renewal does (see
		// leaseCallKeeping).
		keeps = h.renewing && keepsRenewedLease(h.side)
		last = h.count <= 1
		if last {
			// A renewal that now finds the lock gone is not a loss.
			h.releasing.Store(true)
			if c.inFlightLocked(id) > 0 {
				last = false // a re-entry still in flight: give up one hold
			} else {
				h.lastReleases++ // re-entries wait for it (sharedAcquire)
				lastOut = true
				defer func() {
					if lastOut {
						c.lastReleaseDone(h)
					}
				}()
			}
		}
		c.mu.Unlock()
	}
	// The clock is read again only where the time the release is sent
	// bounds the hold: a release that leaves holds. The usual last one
	// reads it once, in releaseContext.
	sent := monoTime(began)
	var mark *leaseMark
	if h != nil && !last {
		sent = time.Now()
		bound := releaseBound(p, h, sent, lease)
		if h.side == sideRead && !bound.IsZero() && !sent.Before(bound) {
			// No read lease of the owner is known to be left once the
			// script runs, which then deletes the lock: the hold ends now,
			// as lost (its release goes on), logged as any loss is, once:
			// only if this ends it (the reply's end below then finds it
			// ended, as does a watchdog round finding it gone meanwhile).
			cause := fmt.Errorf("%w: %w", ErrLockLost, errNoLeaseLeft)
			c.finish(h, cause)
			if h.endedBy(cause) {
				c.log.Warn("lock lost", "lock", h.name, "key", h.key, "reason", errNoLeaseLeft.Error())
			}
		}
		mark = c.leaseCallKeeping(h, bound, keeps)
	}
	var guard guardWait
	if _, ok := p.(guardedReleaser); ok && p.side() == sideRead && mark != nil && !mark.overlapped && s.cfg.guard {
		// The reply may move the deadline later (leftHeld), past the lease
		// a replica has: a failover would then end the lock first. Not
		// with a call in flight already: the reply cannot move it later
		// then. The count is not waited for, as for a renewal. Other
		// releases only move the deadline earlier and need no WAIT.
		owner := c.ownerID(s.key) // before the count (replicasFor)
		guard = s.cfg.guardWait(c.replicasNow(s.key, s.cfg.guardReplicas))
		guard.owner = owner
	}
	st, left, acked, err := func() (releaseStatus, time.Duration, bool, error) {
		// A release whose call panicked (a client wrapper's panic, or one
		// that ended the goroutine) is one that failed: the hold ends, as
		// below, and the panic goes on. Kept, the watchdog would renew for
		// as long as the Client lives a lock whose owner asked to give it
		// up and recovered the panic. Deferred first, so it runs after the
		// lease call's end.
		returned := false
		if h != nil {
			defer func() {
				if !returned {
					c.finish(h, fmt.Errorf("%w: release failed: %w", ErrLockLost, errReleasePanicked))
				}
			}()
		}
		if mark != nil {
			defer mark.end() // also when the call panics (see acquire)
		}
		st, left, acked, err := c.release(rctx, p, field, lease, h, last, 0, guard)
		returned = true
		return st, left, acked, err
	}()
	c.touched(holdID(s.key, field)) // before the hold count below moves
	if err != nil && otherKind(err) {
		// The name is another kind of lock's (the key was deleted
		// elsewhere and taken): the hold is gone, as when another owner
		// took it, and as its Extend and renewal find it.
		err = wrongKind(err)
		if h != nil {
			c.lost(h, fmt.Errorf("%w: %w", errOtherKind, err))
		}
		return opError("unlock", s.name, fmt.Errorf("%w: %w", ErrNotHeld, err))
	}
	if err != nil {
		if h != nil {
			c.finish(h, fmt.Errorf("%w: release failed: %w", ErrLockLost, err))
		}
		return opError("unlock", s.name, wrongKind(err))
	}
	switch st {
	case notHeld, lapsed:
		if h != nil {
			c.lost(h, errNotHeldAtRelease) // logged, as a loss the watchdog finds
		}
		if st == lapsed {
			// Every lease key of the owner had run out (an RWMutex read
			// hold beside other readers): the release took one hold out of
			// the owner's field, which may still count holds this Client
			// does not know of (re-entries whose replies were lost). Left,
			// the field stays in the lock as a read hold of the owner's
			// (State reports it, its write Lock fails with ErrUpgrade)
			// until the other readers leave: given back, as by the owner's
			// last Unlock (stillHeld below).
			_ = c.undoUnknown(rctx, ctx, p, field, lease)
		}
		return fmt.Errorf("scriptlock: unlock %q: %w", s.name, ErrNotHeld)
	case stillHeld:
		if h == nil {
			return nil
		}
		c.mu.Lock()
		h.count--
		remaining := h.count
		c.mu.Unlock()
		if remaining > 0 {
			// A release the replicas did not acknowledge moves it only earlier.
			c.leftHeld(h, mark, sent, lease, left, acked)
			h.untrackOwned(ctx)
			return nil
		}
		// The server had more holds than we knew of (left by an acquisition
		// whose reply was lost): the owner's last Unlock releases them all.
		// Given back from inside an acquisition (its grant outlived its
		// context), the undo does not wait for that acquisition to end.
		c.mu.Lock()
		c.forgetLocked(h)
		c.mu.Unlock()
		c.endReleased(ctx, h, context.Canceled)
		if err := c.undoUnknown(rctx, ctx, p, field, lease); err != nil {
			if errors.Is(err, errUndoUnsettled) {
				return nil // the owner's own hold was released
			}
			return fmt.Errorf("scriptlock: unlock %q: %w", s.name, err)
		}
	default:
		if h != nil {
			// finish and lastReleaseDone in one critical section: the
			// common Unlock takes the Client's mutex once less.
			c.mu.Lock()
			c.forgetLocked(h)
			if lastOut {
				lastOut = false
				h.lastReleases--
				c.acquired.Broadcast()
			}
			// Holds of the owner remained here: the lock went with this one
			// (an RWMutex read release finds no read lease left), so they
			// were lost, not released.
			cause := context.Canceled
			lost := h.count > 1
			if lost {
				cause = fmt.Errorf("%w: %w", ErrLockLost, errNoLeaseLeft)
			}
			c.mu.Unlock()
			c.endReleased(ctx, h, cause)
			if lost && h.endedBy(cause) {
				// Logged once: not when the hold was ended as lost before
				// the release was sent (above), or by the watchdog.
				c.log.Warn("lock lost", "lock", h.name, "key", h.key, "reason", errNoLeaseLeft.Error())
			}
		}
	}
	return nil
}

// undoUnknown gives back, for an Unlock with ctx (rctx its release
// context), the holds field has on the server that this Client does not
// know of. Should that fail, it is made again in the background, or, refused
// for good, logged once; the error is returned all the same.
func (c *Client) undoUnknown(rctx, ctx context.Context, p primitive, field string, lease time.Duration) error {
	err := c.undo(rctx, p, field, lease, 0, ctx.Value(inAcquireKey{}) != nil)
	switch {
	case err == nil:
	case undoRefusedForGood(err):
		// Made again, it is refused again: logged once instead.
		c.undoRefused(p, err)
	default:
		// Keep trying in the background, as for an acquisition's undo: a
		// hold left there keeps the lock from everyone for its lease.
		c.undoLater(p, field, lease, time.Now().Add(lease), 0)
	}
	return err
}

// awaitOwnersGrant is the hold Unlock releases when the owner in ctx has
// none here (nil: still none): an acquisition of that owner (shared through
// its context) in flight may have been granted on the server already, and a
// release by owner would take that grant while its lock context lives on. It
// waits, bounded by rctx, for such acquisitions to register or fail.
func (c *Client) awaitOwnersGrant(rctx, ctx context.Context, id holdKey) *hold {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inFlightLocked(id) <= 0 || ctx.Value(inAcquireKey{}) != nil {
		return c.holds[id]
	}
	stop := context.AfterFunc(rctx, func() {
		c.mu.Lock()
		c.acquired.Broadcast()
		c.mu.Unlock()
	})
	defer stop()
	for c.inFlightLocked(id) > 0 && c.holds[id] == nil && rctx.Err() == nil {
		c.acquired.Wait()
	}
	return c.holds[id]
}

// releaseBound is the loss deadline a release sent at sent that leaves holds
// of h sets at the latest, in force as soon as its script runs, before its
// reply is back (or if it is lost): a Mutex's or FairMutex's release re-arms
// the lock with lease, a write release with lease at least. A read release
// re-arms it with the longest read lease left, unknown until its reply: the
// deadline moves to the latest one the Client can prove is left (see
// readsLeft). A LeanMutex's re-arms nothing (zero: no bound).
func releaseBound(p primitive, h *hold, sent time.Time, lease time.Duration) time.Time {
	switch p.side() {
	case sideRead:
		return readsLeft(h)
	case sideLean:
		return time.Time{}
	}
	return lossDeadline(sent, lease)
}

// readsLeft is the latest loss deadline the owner's read lease keys prove
// after a release that leaves holds deletes one of them (the last one): the
// first key stays, and of the re-entries' keys all but one, which may be
// the longest (zero: h was never re-entered, and its first key stays alone).
func readsLeft(h *hold) time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.reads) == 0 {
		return time.Time{}
	}
	left := h.reads[0]
	top, second := int64(math.MinInt64), int64(math.MinInt64)
	for _, d := range h.reads[1:] {
		if d > top {
			top, second = d, top
		} else if d > second {
			second = d
		}
	}
	return monoTime(max(left, second))
}

// pushRead records a read re-entry's own lease key, whose lease was set no
// earlier than at by the re-entry sent at sent (see hold.reads), within the
// lease an Extend of unknown outcome may set on it later (unknownBound).
// Called before the re-entry moves the loss deadline, so the first one
// finds the deadline the first key set.
func (c *Client) pushRead(h *hold, sent, at time.Time) {
	h.mu.Lock()
	at = unknownBound(h, sent, at)
	if h.reads == nil {
		h.reads = append(make([]int64, 0, 4), h.lossAt.Load())
	}
	h.reads = append(h.reads, monoNanos(at))
	h.mu.Unlock()
}

// leftHeld moves h's loss deadline after a release sent at sent, marked m,
// left the owner holding the lock, with left as releaseOnce reported it and
// lease what the release re-armed the lock with. solo: the release gave up
// one of the holds this Client knows of (not an undo) and, when the failover
// guard applied to it, a replica acknowledged it, so a lease left that it
// reports may move the deadline later when no other call setting the lock's
// expiry overlapped it.
func (c *Client) leftHeld(h *hold, m *leaseMark, sent time.Time, lease, left time.Duration, solo bool) {
	if h.side == sideRead {
		// One lease key fewer: drop the longest re-entry's bound, which
		// may be the key deleted (see readsLeft).
		h.mu.Lock()
		if n := len(h.reads); n > 1 {
			top := 1
			for i := 2; i < n; i++ {
				if h.reads[i] > h.reads[top] {
					top = i
				}
			}
			h.reads[top] = h.reads[n-1]
			h.reads = h.reads[:n-1]
		}
		h.mu.Unlock()
	}
	switch {
	case left > 0:
		// The lock now ends with the owner's longest remaining lease,
		// which may be earlier than the deadline the released hold had
		// set, or later than lease (an RWMutex read release re-arms with
		// no lease of its own), or later than the deadline the release
		// moved to before it was sent (see releaseBound).
		at := lossDeadline(sent, left)
		h.mu.Lock()
		at = unknownBound(h, sent, at)
		c.setLossLocked(h, at, true, false)
		if solo && m != nil && m.soloOn(h) {
			c.setLossLocked(h, at, false, true)
		}
		h.mu.Unlock()
	case left < 0:
		c.armEarlier(h, sent)
	default:
		// The release re-armed the lock with lease, which may be shorter
		// than what a re-entry with a longer lease set.
		c.armEarlier(h, lossDeadline(sent, lease))
	}
}

// lastReleaseDone ends a release of h's last hold and wakes the re-entries
// waiting for it.
func (c *Client) lastReleaseDone(h *hold) {
	c.mu.Lock()
	h.lastReleases--
	c.acquired.Broadcast()
	c.mu.Unlock()
}

// inAcquireKey marks the give-back of a grant by the acquisition that got it,
// still counted in Client.acquiring: its unlock must not wait for itself.
type inAcquireKey struct{}

// releaseContext is ctx without its cancellation (a cancelled request still
// releases its lock) and bounded by timeout. Releases that begin within a
// 64th of the timeout of one another share one deadline, and so one timer,
// instead of a timer each: every release is bounded by at most timeout and
// at least 63/64 of it.
func (c *Client) releaseContext(ctx context.Context, timeout time.Duration) context.Context {
	rctx, _ := c.releaseContextAt(ctx, timeout, nil)
	return rctx
}

// releaseContextAt is releaseContext that also returns the time it read
// (monoNanos). The first release of h (nil: none) builds its context in h's
// allocation: the usual Unlock allocates none of its own.
func (c *Client) releaseContextAt(ctx context.Context, timeout time.Duration, h *hold) (_ context.Context, now int64) {
	// Monotonic, so a wall clock step does not stretch a bound, and only
	// that clock is read (monoNow) but when a bound is made.
	now = monoNow()
	b := c.releaseBound.Load()
	if b == nil || b.timeout != timeout || time.Duration(now-b.created) > timeout/64 {
		at := time.Now() // the deadline Deadline reports is a full reading
		nb := &sharedBound{timeout: timeout, created: monoNanos(at)}
		// Not a child of c.ctx: Close does not cut releases short.
		nb.ctx, nb.cancel = context.WithDeadline(context.Background(), at.Add(timeout))
		c.releaseBound.Store(nb)
		b = nb
		now = nb.created
	}
	if h != nil && h.rcTaken.CompareAndSwap(false, true) {
		h.rc = boundedContext{Context: b.ctx, values: ctx}
		return &h.rc, now
	}
	return &boundedContext{Context: b.ctx, values: ctx}, now
}

// sharedBound is one deadline shared by the releases that begin within a
// 64th of its timeout after created. Its timer ends it at the deadline;
// cancel is never needed.
type sharedBound struct {
	ctx     context.Context
	cancel  context.CancelFunc
	timeout time.Duration
	created int64 // monoNanos
}

// boundedContext has the deadline of a shared bound and the values of a
// detached caller's context, whose cancellation it never sees.
type boundedContext struct {
	context.Context // Deadline, Done, Err
	values          context.Context
}

// Value asks the bound first: it holds no values of its own, but it answers
// the context package's lookup of the nearest cancelable context (for Cause,
// and for a context derived from this one), which must find the bound and not
// the caller's. That leaves the caller's cancellation unseen without wrapping
// it in context.WithoutCancel, one allocation per release.
func (b *boundedContext) Value(key any) any {
	if v := b.Context.Value(key); v != nil {
		return v
	}
	return b.values.Value(key)
}

// queuedView is ctx as a release's script call is to see it: an Unlock's
// bound (a *boundedContext, the release timeout) ends the call without
// being a deadline rueidis sees, which closed the connection renewals share
// on a link slower than that bound (see cancelAfter); the retries see it.
// Other contexts are as they are (an undo's reports no deadline already).
// No allocation: queuedBound is one pointer.
func queuedView(ctx context.Context) context.Context {
	if b, ok := ctx.(*boundedContext); ok {
		return queuedBound{b}
	}
	return ctx
}

// queuedBound is a release's bound reporting no deadline, marked as a
// queued call's (keptWhenQueued).
type queuedBound struct{ *boundedContext }

func (queuedBound) Deadline() (time.Time, bool) { return time.Time{}, false }

func (q queuedBound) Value(key any) any {
	if key == (queuedCallKey{}) {
		return true
	}
	return q.boundedContext.Value(key)
}

// release runs a release script, retrying transport failures with the same
// latch key (a retry whose first attempt did run reports that outcome) and
// falling back to plain pub/sub when the server refuses sharded publishing.
// h is the hold released (nil: none this Client knows of). Before its loss
// deadline the lease cannot have run out on the server, so only this
// release can remove the owner: the script is told so (vouched) while the
// deadline has not passed; after it, a retry cannot read a missing owner as
// its own work. last: it is the owner's last local hold (see releaseCall).
// token: with no hold (h nil), the fencing token of the hold given up, so
// that the release leaves a newer hold of the same owner alone (0: none).
// guard on: p is a guardedReleaser, and WAIT follows the script; acked
// reports whether guard.acks replicas acknowledged it (true unguarded).
func (c *Client) release(ctx context.Context, p primitive, field string, lease time.Duration, h *hold, last bool, token int64, guard guardWait) (st releaseStatus, left time.Duration, acked bool, err error) {
	return c.releaseKeeping(ctx, p, field, lease, h, last, token, guard, keepPlace{}, "")
}

// releaseKeeping is release; keep: see releaseCall.keep. latch, for an
// undo's release, is its latch (see undoKeeping): every attempt reads it, and
// it lives undoLatchTTL.
func (c *Client) releaseKeeping(ctx context.Context, p primitive, field string, lease time.Duration, h *hold, last bool, token int64, guard guardWait, keep keepPlace, latch string) (st releaseStatus, left time.Duration, acked bool, err error) {
	beforeLoss := func() bool { return c.monoClock() < h.lossAt.Load() }
	vouched := h != nil && !h.released() && beforeLoss()
	r := releaseCall{lease: lease, latchTTL: c.cfg.releaseTimeout, vouched: vouched, keep: keep, latch: latch}
	if h != nil && h.shared.Load() {
		// A read hold's token is its mark (RwReadAcquire).
		r.token = h.token
	} else if h == nil {
		r.token = token
	}
	lr, fast := p.(lastReleaser)
	fast = fast && lr.releasesLast()
	// The latch's expiry is set when an attempt may write a latch: not by
	// the usual release of a last hold, nor by a primitive without latch
	// keys (LeanMutex), which then read no clock for it.
	ttlSet := latch != ""
	if latch != "" {
		r.latchTTL = undoLatchTTL
	}
	// mayHaveRun: an earlier attempt may have run (its reply was lost, or it
	// failed part-way), so this one must tell a repeat from a release by
	// someone else. An attempt Redis answered with retryLater ran nothing.
	mayHaveRun := false
	cr := changeRetry{rt: newRetrier()}
	for {
		r.retry = mayHaveRun || latch != ""
		if mayHaveRun && r.vouched && !beforeLoss() {
			r.vouched = false // the lease may have run out since
		}
		r.last = vouched && last && !mayHaveRun && fast && r.token == 0
		if !r.last && !ttlSet && p.spec().latch != "" {
			ttlSet = true
			if d, ok := ctx.Deadline(); ok {
				// Whole seconds, rounded up but within the release timeout
				// (which bounds every release context): the latch still
				// outlives every retry, and the few values left are sent as
				// cached text.
				r.latchTTL = max(time.Until(d), time.Second)
				r.latchTTL = min(addSat(r.latchTTL, time.Second-1).Truncate(time.Second), max(p.spec().cfg.releaseTimeout, time.Second))
			}
		}
		r.publish = c.publishCommand()
		if !r.last && r.latch == "" {
			// Drawn once, before the first attempt that may write it, and
			// kept for every retry. The client id is random and the counter
			// never repeats within it, so latch keys are unique without
			// drawing random bytes per release. A primitive without latch
			// keys (LeanMutex) gets none.
			if prefix := p.spec().latch; prefix != "" {
				var buf [256]byte
				b := append(append(append(append(buf[:0], prefix...), ':'), c.id...), ':')
				r.latch = string(strconv.AppendUint(b, c.requests.Add(1), 36))
			}
		}
		acked = true
		if guard.on() {
			st, left, acked, err = p.(guardedReleaser).releaseGuarded(ctx, field, r, guard)
		} else {
			st, left, err = p.releaseOnce(queuedView(ctx), field, r)
		}
		if err == nil {
			return st, left, acked, nil
		}
		// Refusals until the release context ends (the release timeout): a
		// lock left to its lease would keep every waiter out for that long.
		again, ran, err := cr.next(ctx, c, true, r.publish, err)
		if !again {
			return st, 0, false, err
		}
		mayHaveRun = mayHaveRun || ran
		r.again = cr.refused
	}
}

// undo takes back the holds field has on the server beyond those this Client
// knows of. It is idempotent: it reads the server's count and releases the
// difference, so running it twice, or after an attempt that never ran,
// changes nothing more. Its releases name token (see release; 0: none).
// own: the caller is an acquisition of the owner in flight (counted in
// c.acquiring), not a background undo.
func (c *Client) undo(ctx context.Context, p primitive, field string, lease time.Duration, token int64, own bool) error {
	return c.undoKeeping(ctx, p, field, lease, token, own, keepPlace{})
}

// undoKeeping is undo; place: the owner's wait goes on (see keepPlace).
func (c *Client) undoKeeping(ctx context.Context, p primitive, field string, lease time.Duration, token int64, own bool, place keepPlace) error {
	key := p.spec().key
	id := holdID(key, field)
	self := 0
	if own {
		self = 1
	}
	c.awaitAcquiring(ctx, id, own)
	c.mu.Lock()
	if c.undoWatch == nil {
		c.undoWatch = map[holdKey]*undoWatch{}
	}
	w := c.undoWatch[id]
	if w == nil {
		w = &undoWatch{}
		c.undoWatch[id] = w
		c.watching.Add(1)
	}
	w.n++
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		if w.n--; w.n == 0 {
			delete(c.undoWatch, id)
			c.watching.Add(-1)
		}
		c.mu.Unlock()
	}()
	unsettled := false // the last read was of a count that moved: read again
	for range 64 {
		unsettled = false
		c.mu.Lock()
		seen := w.changes
		c.mu.Unlock()
		// The release names the counter as it was before the count was
		// read (a fresh grant draws the next token): when it reaches the
		// server late (hung on a connection rueidis dropped as dead), after
		// the holds it was to give back went away (ForceUnlock, or their
		// lease ran out) and the owner took the lock afresh, it leaves that
		// grant alone rather than take a hold this Client counts. Also
		// when the counter had run out its idle time (WithFenceIdle): a
		// grant since starts it again.
		named := token
		if f, ok := p.(undoFencer); ok && token == 0 {
			t, err := f.fenceNow(ctx, field)
			if err != nil {
				return err
			}
			named = t
		}
		n, err := p.holdsOf(ctx, field)
		if err != nil {
			return err
		}
		c.mu.Lock()
		// Another undo's release is waited for during Close too (each is
		// bounded by its ctx): the holds stay live until Close ends them,
		// after the acquisitions in flight.
		if ((c.inFlightLocked(id) > self || w.changes != seen) && !c.closing || w.releasing) && ctx.Err() == nil {
			// An acquisition of the owner began while the count was read
			// (the server may have granted it, and the count hold it,
			// before its reply is registered), the owner's holds here
			// changed meanwhile (a release the count may predate), or
			// another undo of the owner is giving back what it found
			// (the same holds): read again once they are over.
			c.awaitUndoLocked(ctx, w)
			c.mu.Unlock()
			c.awaitAcquiring(ctx, id, own)
			unsettled = true
			continue
		}
		keep := 0
		h := c.holds[id]
		if h != nil {
			keep = h.count
			// The release re-arms the lock for the holds kept: with their
			// lease (Extend changes it under c.mu), not the undone attempt's,
			// which may be shorter than what a renewal or Extend set since.
			lease = h.lease
		}
		if n <= int64(keep) {
			// A release of an earlier undo may still be on its way: its
			// latch stays for the owner's next undo (undoLatchLocked).
			c.mu.Unlock()
			return nil
		}
		w.releasing = true // the other undos of the owner wait (above)
		latch, reused := c.undoLatchLocked(id, p)
		c.mu.Unlock()
		// Not vouched: these holds are none this Client knows of.
		sent := time.Now()
		var mark *leaseMark
		if h != nil {
			// It sets the expiry of the lock h holds, as a re-entrant
			// Unlock does: an Extend, re-entry or renewal beside it may
			// have run on the server first.
			// A read release's bound (readsLeft) counts on deleting one of
			// the holds this Client knows of, which the undo need not.
			var bound time.Time
			if p.side() != sideRead {
				bound = releaseBound(p, h, sent, lease)
			}
			mark = c.leaseCall(h, bound)
		}
		st, left, _, err := func() (releaseStatus, time.Duration, bool, error) {
			if mark != nil {
				defer mark.end() // also when the call panics (see acquire)
			}
			defer func() {
				c.mu.Lock()
				w.releasing = false
				c.touchedLocked(id) // another undo's count may predate it
				c.acquired.Broadcast()
				c.mu.Unlock()
			}()
			// Unguarded: an undo moves no deadline later (leftHeld).
			return c.releaseKeeping(ctx, p, field, lease, nil, false, named, guardWait{}, place, latch)
		}()
		if err != nil {
			return err // the latch is kept for the next undo of the owner
		}
		if latch != "" && st != notHeld {
			// Its outcome is recorded: an attempt of it landing later
			// changes nothing. (One that found no hold records none.)
			c.mu.Lock()
			delete(c.undoLatches, id)
			c.mu.Unlock()
		}
		if st == stillHeld && h != nil {
			// As a re-entrant Unlock: a re-entry with a longer lease may
			// have set the deadline past it. The release may have taken
			// one of the holds this Client knows of rather than the one
			// undone: it does not move the deadline later.
			c.leftHeld(h, mark, sent, lease, left, false)
		}
		if reused || st == notHeld && named != token {
			// The answer may be an earlier undo's outcome, recorded when
			// the counts were others, or a grant came between the reads of
			// the counter and the count: read them again.
			continue
		}
		if st != stillHeld && st != lapsed {
			return nil
		}
	}
	if unsettled {
		// The count never held still long enough to compare: a hold found
		// may still be on the server. Not done: the caller tries again.
		return errUndoUnsettled
	}
	return nil
}

// undoFencer is a primitive whose fresh grants draw the next token from a
// fencing-token counter its releases can name (see release's token), or
// mark the hold with what they name instead (an RWMutex's read holds):
// fenceNow reads it for field from the primary (-1: missing, which a release
// naming it checks as it checks a token: a counter restarted since, or a
// hold marked since, by a fresh grant, refuses it; 0: none to name).
type undoFencer interface {
	fenceNow(ctx context.Context, field string) (int64, error)
}

// undoLatchTTL is how long the latch of an undo's release lives: a release
// of the same undo reaching the server within it, after the other, changes
// nothing.
const undoLatchTTL = time.Minute

// undoLatch is the latch of an undo's release whose outcome is unknown, and
// when it was drawn (monoNanos).
type undoLatch struct {
	key string
	at  int64
}

// undoLatchLocked is the latch for the release of an undo of id (c.mu held),
// and whether it is an earlier undo's: the one of the owner's last undo
// release whose outcome is unknown, else a new one, kept until a release
// answers. That release may still reach the server (its connection dropped
// as dead with the request on its way): when the next undo, finding an extra
// hold still there, released it again under a new latch, both would run,
// and the second would take one of the holds this Client still counts, or
// delete the lock under the owner's live contexts. That holds whatever the
// owner's holds did in between: an Unlock or re-entry of the owner changes
// the counts the next undo finds, not what the hung release takes. Under one
// latch, read by every attempt, whichever runs second changes nothing (and
// answers the first one's outcome: the caller reads the counts again). ""
// for a primitive without latch keys (LeanMutex).
func (c *Client) undoLatchLocked(id holdKey, p primitive) (string, bool) {
	prefix := p.spec().latch
	if prefix == "" {
		return "", false
	}
	now := monoNow()
	// Half the latch's life: the first release, sent after now, records its
	// outcome for the whole of it when it runs.
	if l, ok := c.undoLatches[id]; ok && now-l.at < int64(undoLatchTTL)/2 {
		return l.key, true
	}
	c.sweepUndoLatchesLocked(now)
	if c.undoLatches == nil {
		c.undoLatches = map[holdKey]undoLatch{}
	}
	var buf [256]byte
	b := append(append(append(append(buf[:0], prefix...), ':'), c.id...), ':')
	key := string(strconv.AppendUint(b, c.requests.Add(1), 36))
	c.undoLatches[id] = undoLatch{key, now}
	return key, false
}

// errUndoUnsettled: an undo whose owner's holds kept changing as it read their
// count made no comparison it could act on.
var errUndoUnsettled = errors.New("the owner's hold count kept changing as the undo read it")

// awaitAcquiring waits, bounded by ctx, until no other acquisition of the
// owner (shared through its context) is in flight: one the server has granted
// and this Client has not registered yet would look to undo like the hold to
// take back. The caller's own acquisition (own) is not counted meanwhile, as
// in grant, so two undoing attempts do not wait for each other.
func (c *Client) awaitAcquiring(ctx context.Context, id holdKey, own bool) {
	self := 0
	if own {
		self = 1
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inFlightLocked(id) <= self {
		return
	}
	stop := context.AfterFunc(ctx, func() {
		c.mu.Lock()
		c.acquired.Broadcast()
		c.mu.Unlock()
	})
	defer stop()
	c.excludeLocked(id, self)
	for c.inFlightLocked(id) > 0 && ctx.Err() == nil && !c.closing {
		c.acquired.Wait()
	}
	c.excludeLocked(id, -self)
}

// inFlightLocked is how many acquisitions of id's owner are in flight and
// not waiting for the others (c.mu held): one waiting in grant or in its own
// undo (awaitAcquiring) is not counted meanwhile, so that two such waits do
// not wait for each other. The waits are counted apart (excluding), not
// taken off acquiring, which only sharedAcquire and its uncount change: an
// undo let go at its bound (callBounded) can end its wait after its
// acquisition was uncounted, and a count changed in place then stayed one
// too high for good, which kept the owner's later re-entries waiting.
func (c *Client) inFlightLocked(id holdKey) int {
	return c.acquiring[id] - c.excluding[id]
}

// excludeLocked adds n to the waits of id's acquisitions not counted
// (c.mu held); an entry that reaches 0 is deleted.
func (c *Client) excludeLocked(id holdKey, n int) {
	if n == 0 {
		return
	}
	if c.excluding == nil {
		c.excluding = map[holdKey]int{}
	}
	if c.excluding[id] += n; c.excluding[id] <= 0 {
		delete(c.excluding, id)
	}
}

// undoWatch counts the changes of one owner's hold count (Client.undoWatch)
// while undos of the owner read it: its acquisitions ending and its releases
// answered.
type undoWatch struct {
	n         int // undos watching
	changes   uint64
	releasing bool // one of them is giving back what it found
}

// awaitUndoLocked waits, bounded by ctx, while another undo watching w
// releases (c.mu held).
func (c *Client) awaitUndoLocked(ctx context.Context, w *undoWatch) {
	if !w.releasing {
		return
	}
	stop := context.AfterFunc(ctx, func() {
		c.mu.Lock()
		c.acquired.Broadcast()
		c.mu.Unlock()
	})
	defer stop()
	for w.releasing && ctx.Err() == nil {
		c.acquired.Wait()
	}
}

// touched notes a change of id's hold count, if an undo watches it.
func (c *Client) touched(id holdKey) {
	if c.watching.Load() == 0 {
		return
	}
	c.mu.Lock()
	c.touchedLocked(id)
	c.mu.Unlock()
}

// touchedLocked is touched with c.mu held.
func (c *Client) touchedLocked(id holdKey) {
	if w := c.undoWatch[id]; w != nil {
		w.changes++
	}
}

// undoNow runs undo in the acquiring goroutine, detached from its context
// and bounded by the release timeout. A panic of undo (a client wrapper's)
// goes on on the caller's goroutine once the background undo has taken it
// over, as a settling undo's does: what it was to give back was otherwise
// held by nobody until its lease ended.
func (c *Client) undoNow(p primitive, field string, lease time.Duration) (err error) {
	goOnAfter(func() { err = c.undoNowOnce(p, field, lease) }, func() {
		c.undoLater(p, field, lease, time.Now().Add(lease), 0)
	})
	return err
}

// undoNowOnce is undoNow but for a panic of undo, which goes on as it is.
func (c *Client) undoNowOnce(p primitive, field string, lease time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), p.spec().cfg.releaseTimeout)
	defer cancel()
	// Ended at that bound, not cut by a deadline rueidis sees, which closed
	// the connection renewals share (withoutDeadline).
	err := c.undo(withoutDeadline(ctx), p, field, lease, 0, true)
	switch {
	case err != nil && undoRefusedForGood(err):
		// Made again, it is refused again: logged once instead.
		c.undoRefused(p, err)
	case err != nil:
		c.undoLater(p, field, lease, time.Now().Add(lease), 0)
	}
	return err
}

// undoRefused logs, once, that Redis refused for good (undoRefusedForGood) the
// give-back of holds of p the Client does not know of (an acquisition of
// unknown outcome's, or found by Unlock): the same call made again is
// refused again, so it is tried no more, and the lock stays held until the
// lease ends. By the reporter: a logger that blocks holds up no caller.
func (c *Client) undoRefused(p primitive, err error) {
	name, key := p.spec().name, p.spec().key
	if otherKind(err) {
		c.rep.logLater(func() {
			c.log.Warn("lock hold not given back: another kind of lock now uses the name, so a hold an acquisition of unknown outcome may have taken cannot be released; it is tried no more",
				"lock", name, "key", key, "error", err.Error())
		})
		return
	}
	c.rep.logLater(func() {
		c.log.Warn("lock hold not given back: Redis refused the release of a hold an acquisition of unknown outcome may have taken, and would refuse it again, so it is tried no more; the lock stays held until its lease ends: if the error is NO_PUBLISH, grant the Client's ACL user the channel (or the command) it names",
			"lock", name, "key", key, "error", err.Error())
	})
}

// undoLater undoes an acquisition of unknown outcome in the background,
// retrying until it succeeds, the lease it may have set has run out anyway,
// or the Client closes (then Close waits for one last attempt; see
// undoUntil); once Close has begun, it makes that attempt at once. Once it
// has succeeded it looks again after undoRecheck's pauses: the attempt may
// still be on its way to the server, since rueidis closes an idle connection
// whose call ran past its deadline and sends the undo on a new one, which can
// overtake the old one's bytes (in a proxy, say). token as for undo.
func (c *Client) undoLater(p primitive, field string, lease time.Duration, until time.Time, token int64) {
	c.undoLaterQueued(p, field, lease, until, token, nil)
}

// waitEnd is the end of the wait an attempt of unknown outcome belonged to:
// over once the wait has ended (and left the line), with the wait the
// attempt was made with.
type waitEnd struct {
	over atomic.Bool
	wait time.Duration
	// unanswered: the undo made as Close began got no answer from the
	// server (see undoLaterFrom), whose leave of the line would get none
	// either.
	unanswered atomic.Bool
}

// lateLeaver is a primitive whose line an attempt that reaches the server
// late can put its waiter back in, for longer than the waiter timeout (a
// FairMutex in Redisson's protocol keeps the entry until its score passes):
// leaveLate takes the entry out, bounded by ctx, and changes nothing when
// there is none.
type lateLeaver interface {
	leaveLate(ctx context.Context, field string, wait time.Duration) error
}

// undoLaterQueued is undoLater for an attempt that could have queued its
// waiter (ended non-nil): once the wait is over, each undo also takes out
// of a lateLeaver's line the place the attempt may have taken after the
// waiter left, unless the owner (shared through its context) waits there
// again.
func (c *Client) undoLaterQueued(p primitive, field string, lease time.Duration, until time.Time, token int64, ended *waitEnd) {
	c.undoLaterFrom(p, field, lease, until, token, ended, false)
}

// recheckLater is undoLaterQueued for an attempt an undo has settled
// already: it only looks again after undoRecheck's pauses.
func (c *Client) recheckLater(p primitive, field string, lease time.Duration, until time.Time, ended *waitEnd) {
	c.undoLaterFrom(p, field, lease, until, 0, ended, true)
}

// undoMarker is a primitive whose background undo of an ended hold that
// drew no token reads first what its releases name instead (token
// leanMarkUnread; see LeanMutex.undoMark).
type undoMarker interface {
	undoMark(ctx context.Context, field string) (int64, error)
}

// undoLaterFrom is undoLaterQueued; recheck: the first undo was made.
func (c *Client) undoLaterFrom(p primitive, field string, lease time.Duration, until time.Time, token int64, ended *waitEnd, recheck bool) {
	leaver, _ := p.(lateLeaver)
	// A panic of its calls (a client wrapper's) has no caller to reach.
	started := c.background(logged(c.log, "undoing an acquisition of unknown outcome", func() {
		ctx, cancel := context.WithDeadline(c.ctx, until)
		defer cancel()
		id := holdID(p.spec().key, field)
		// Written by the reporter: a logger that blocks must not hold up
		// the next attempt, while the lock stays held by nobody.
		logUndo := func(msg string, err error) {
			if undoRefusedForGood(err) {
				c.undoRefused(p, err) // and undoUntil tries no more
				return
			}
			c.rep.logLater(func() { c.log.Debug(msg, "lock", p.spec().name, "err", err) })
		}
		// Set once leaving the line was refused for good: the rechecks
		// leave it no more (and log it no more).
		var leaveRefused atomic.Bool
		// Atomic: an undo that outlived its bound (callBounded) may still
		// be reading the mark as the next one begins.
		var tok atomic.Int64
		tok.Store(token)
		undo := func(ctx context.Context) error {
			token := tok.Load()
			if token == leanMarkUnread {
				m, err := p.(undoMarker).undoMark(ctx, field)
				if err != nil {
					logUndo("undoing an acquisition of unknown outcome", err)
					return err
				}
				tok.CompareAndSwap(leanMarkUnread, m)
				token = m
			}
			err := c.undo(ctx, p, field, lease, token, false)
			if err != nil {
				logUndo("undoing an acquisition of unknown outcome", err)
				return err
			}
			if leaver != nil && ended != nil && ended.over.Load() && !leaveRefused.Load() {
				// Marked as leaving while the leave is under way: a wait of
				// the owner that begins meanwhile would take a place the
				// leave, naming the owner's field alone, takes out.
				left, waiting, lerr := c.leavingLate(ctx, lineKey{id, waitLine(p)})
				if lerr != nil {
					return lerr
				}
				if !waiting {
					err = func() error {
						// Also on a panic of the leave (a client
						// wrapper's, logged): the owner's next wait
						// would wait for a leave that is over.
						defer left()
						if c.testHookLeaveLate != nil {
							c.testHookLeaveLate()
						}
						return leaver.leaveLate(ctx, field, ended.wait)
					}()
					if err != nil {
						if undoRefusedForGood(err) {
							// The hold was given back: only the place in
							// line stays, until its deadline. Said once.
							leaveRefused.Store(true)
							name := p.spec().name
							c.rep.logLater(func() {
								c.log.Warn("lock waiter not taken out of the line after an acquisition of unknown outcome: Redis refused the leave for good, so it is tried no more; the place stays until its deadline passes",
									"lock", name, "error", err.Error())
							})
							return nil
						}
						logUndo("leaving the line after an acquisition of unknown outcome", err)
					}
				}
			}
			return err
		}
		if !recheck && !c.undoUntil(until, p.spec().cfg.releaseTimeout, undo) {
			return
		}
		for again := undoRecheck; ; {
			// A look again while the owner (shared through its context)
			// acquires anew could take that grant before it is registered:
			// skip to the next pause then.
			for {
				if len(again) == 0 {
					return
				}
				t := time.NewTimer(again[0])
				again = again[1:]
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
					return
				}
				c.mu.Lock()
				busy := c.inFlightLocked(id) > 0
				c.mu.Unlock()
				if !busy {
					break
				}
			}
			if !c.undoUntil(until, p.spec().cfg.releaseTimeout, undo) {
				return
			}
		}
	}))
	if !started && !recheck {
		// Close began and runs no more background work, but waits for the
		// acquisition that calls this: undo here. (A settled attempt was
		// undone already.)
		ctx, cancel := context.WithTimeout(context.Background(), min(p.spec().cfg.releaseTimeout, closeUndoMax))
		defer cancel()
		err := c.callBounded(ctx, func(ctx context.Context) error {
			if token == leanMarkUnread {
				m, err := p.(undoMarker).undoMark(ctx, field)
				if err != nil {
					return err
				}
				token = m
			}
			return c.undo(ctx, p, field, lease, token, false)
		})
		if ended != nil {
			ended.unanswered.Store(err != nil && unknownOutcome(err))
		}
	}
}

// undoUntil makes undo, each attempt bounded by timeout, until it succeeds,
// until passes, or Redis refuses it for good (undoRefusedForGood), pausing from
// 50 ms doubling to 1 s. When Close stops it
// first, it makes one last attempt (bounded by closeUndoMax too), which
// Close waits for: an acquisition of unknown outcome left in place would
// keep its lock or permits from everyone until its lease ran out. It reports
// whether undo succeeded.
// A panic of undo (a client wrapper's), which has no caller to reach, is an
// undo that failed: logged (at ERROR the first time, with its stack; at
// DEBUG after that), and made again as after an error. Ending the undo at
// the first left what it was to give back taken until its lease ended, and
// a Semaphore's permits, which have none, for good.
func (c *Client) undoUntil(until time.Time, timeout time.Duration, undo func(context.Context) error) bool {
	ctx, cancel := context.WithDeadline(c.ctx, until)
	defer cancel()
	panics := 0
	call := func(ctx context.Context) (err error) {
		// The panic's own stack, taken where it was recovered first: on the
		// goroutine callBounded runs undo on, before the panic is carried
		// to this one, whose stack does not name the wrapper. Atomic: a
		// call let go at its bound may still panic.
		var stack atomic.Pointer[string]
		v, _, panicked := catch(func() {
			err = c.callBounded(ctx, func(ctx context.Context) (err error) {
				// Bounded by ctx's end, not a deadline rueidis sees: one
				// ending a call on the connection renewals share closed
				// it, failing them (withoutDeadline).
				v, at, panicked := catch(func() { err = undo(withoutDeadline(ctx)) })
				if panicked {
					stack.Store(&at)
					panic(v)
				}
				return err
			})
		})
		if !panicked {
			return err
		}
		panics++
		if panics == 1 {
			if at := stack.Load(); at != nil {
				return c.callPanickedAt(undoingLater, v, *at)
			}
			return c.callPanicked(undoingLater, v)
		}
		n := panics
		c.rep.logLater(func() { c.log.Debug("panic recovered again", "in", undoingLater, "panic", v, "panics", n) })
		return fmt.Errorf("%w: %v", errCallPanicked, v)
	}
	retry := backoff{cur: 50 * time.Millisecond, max: time.Second}
	for {
		actx, acancel := context.WithTimeout(ctx, timeout)
		err := call(actx)
		acancel()
		if err == nil {
			return true
		}
		if undoRefusedForGood(err) {
			// The same call made again is refused again (NO_PUBLISH: the
			// ACL user may not publish the release message; NOPERM): the
			// undo is over, and undo has told so.
			return false
		}
		if retry.wait(ctx, time.Time{}) != nil {
			break
		}
	}
	if c.ctx.Err() == nil || !time.Now().Before(until) {
		return false // until passed: the lease it may have set is over
	}
	last := time.Now().Add(min(timeout, closeUndoMax))
	if until.Before(last) {
		last = until
	}
	actx, acancel := context.WithDeadline(context.WithoutCancel(c.ctx), last)
	defer acancel()
	return call(actx) == nil
}

// undoingLater is what a panic logged in a background undo was in.
const undoingLater = "a background undo"

// leaveContext bounds a wait's leave of its line (primitive.abandon):
// detached from ctx, by timeout, and cut off closeUndoMax after Close began,
// or after the leave began if that is later, as a waiting call's attempts
// are (attemptCut), its calls marked for sharedDial (cutCallKey). A wait
// Close ends, or one that gives up as Close begins, leaves from an
// acquisition Close waits for: against a server that stopped answering it
// would hold Close for the whole timeout, when the place left behind
// expires on its own. A leave begun after that second (its wait's first
// attempt, which Close does not cut off, answered late) gets one of its own:
// cut off at once, it was never sent, though the server answered, and the
// place stayed until it expired (in Redisson's queue, up to threadWaitTime
// times its place), holding up every waiter behind it.
func (c *Client) leaveContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	rctx, cancel := context.WithTimeout(context.WithValue(context.WithoutCancel(ctx), cutCallKey{}, true), timeout)
	stop := context.AfterFunc(c.closingCtx, func() {
		t := time.NewTimer(closeUndoMax)
		defer t.Stop()
		select {
		case <-t.C:
			cancel()
		case <-rctx.Done():
		}
	})
	// Ended at timeout, not by a deadline rueidis sees, which closed the
	// connection renewals share (withoutDeadline).
	return withoutDeadline(rctx), func() { stop(); cancel() }
}

// closeUndoMax bounds an undo that Close waits for: with Redis down, the
// attempt can only fail, and a Client shutting down should not wait the whole
// release timeout for that (rueidis retries a read until its deadline).
const closeUndoMax = time.Second

// undoRecheck are the pauses after which undoLater looks again for a late
// grant of the attempt it undid (or, for a wait that is over, a late place in
// line; see undoLaterQueued): most arrive within a fraction of a second, the
// last look bounds what a slow path can leave held.
var undoRecheck = []time.Duration{250 * time.Millisecond, time.Second, 3 * time.Second}

// retryRelease runs a call that gives something up (leaving a waiter set or
// queue), retrying transport failures and falling back to plain pub/sub when
// the server refuses sharded publishing.
func (c *Client) retryRelease(ctx context.Context, call func(publish string) error) error {
	for attempt := 0; ; attempt++ {
		publish := c.publishCommand()
		err := call(publish)
		if err == nil {
			return nil
		}
		if c.publishPlainly(err, publish) {
			continue
		}
		// An answer from Redis (also an error the script declares, as
		// NO_PUBLISH) comes again whatever the retry.
		if _, redisErr := rueidis.IsRedisErr(err); redisErr || refusedForGood(err) || attempt >= 3 || ctx.Err() != nil {
			return err
		}
		select {
		case <-time.After(time.Duration(attempt+1) * 50 * time.Millisecond):
		case <-ctx.Done():
			return err
		}
	}
}
