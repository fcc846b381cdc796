package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
)

// CountDownLatch is a distributed count-down latch with Redisson's
// RCountDownLatch semantics and layout: the count is a string counter under
// the name, deleted when it reaches zero, and the channel
// redisson_countdownlatch__channel__{name} carries "0" (reached zero: every
// waiter is released) and "1" (a new count was set). Every call on a name
// another kind of lock holds fails with ErrWrongKind and changes nothing.
type CountDownLatch struct {
	c       *Client
	name    string
	key     string
	channel string
	cfg     *config // shared with the Client, or the handle's own with options
}

// CountDownLatch returns a handle for the latch called name. No LockOption
// applies to a latch: opts exist for symmetry with the other handles, and
// any given is an error (ErrInvalidArgument), as is an invalid name.
func (c *Client) CountDownLatch(name string, opts ...LockOption) (*CountDownLatch, error) {
	cfg, key, err := c.handleConfig(kindLatch, name, opts)
	if err != nil {
		return nil, err
	}
	return &CountDownLatch{c: c, name: name, key: key, cfg: cfg,
		channel: latchChannel(key, c.rc.Mode() == rueidis.ClientModeCluster)}, nil
}

// latchChannel is Redisson's latch channel: the raw name always in braces,
// even when it already carries a hash tag (RedissonCountDownLatch does not
// apply its prefix rule here). On a cluster such a channel ("...{batch:{42}}"
// hashes "batch:{42") lies in another slot than the latch, so no script may
// name both: Redisson's own latch fails there with CROSSSLOT, and no Java
// client can share that latch. Only in that case the channel drops the added
// braces and stays in the latch's slot.
func latchChannel(key string, cluster bool) string {
	if cluster && strings.Contains(key, "{") {
		return "redisson_countdownlatch__channel__" + key
	}
	return "redisson_countdownlatch__channel__{" + key + "}"
}

// Name returns the latch's name.
func (l *CountDownLatch) Name() string { return l.name }

// fail is the error of operation op on the latch.
func (l *CountDownLatch) fail(op string, err error) error {
	return fmt.Errorf("scriptlock: latch %q: %s: %w", l.name, op, err)
}

// Key returns the Redis key of the latch's count (prefix + name).
func (l *CountDownLatch) Key() string { return l.key }

// TrySetCount starts the latch at count, only if it is not already counting,
// and reports whether it did. A call whose reply is lost with its connection
// is made again and still reports true when its first attempt set the count
// (it leaves a record of its own,
// redisson_countdownlatch_latch:{name}:set:<client-id>:<n>, for a minute),
// and sets nothing again, even if the latch was counted down to zero or
// deleted in between, and another caller may have set a new count since. An
// error that remains, a dial error too (as for Semaphore.TrySetPermits),
// leaves the outcome unknown and says so: the count may have been set, and
// setting it again once it was counted down to zero would start it anew.
func (l *CountDownLatch) TrySetCount(ctx context.Context, count int64) (bool, error) {
	if err := l.c.checkHandle(ctx); err != nil {
		return false, l.fail("set count", err)
	}
	if err := positive("count", count); err != nil {
		return false, l.fail("set count", err)
	}
	ok, err := l.c.trySet(ctx, "redisson_countdownlatch_latch", l.key, func(ctx context.Context, record, nonce, publish string) (bool, error) {
		return generated.LatchTrySet(ctx, l.c.rc, l.key, l.channel, record, count, nonce, publish, l.c.recordTTL)
	})
	if err != nil {
		return false, l.fail("set count", notCount(err))
	}
	return ok, nil
}

// CountDown decrements the count; reaching zero releases every waiter. On a
// latch that is not counting it does nothing. Like Semaphore.Release it runs
// detached from ctx's cancellation, bounded by the Client's release timeout
// (WithReleaseTimeout): a worker's CountDown lost to its cancelled context
// would leave the waiters waiting for good. It works during and after the
// Client's Close, as long as the rueidis client is open: a worker that
// finishes at shutdown still counts. A call whose reply is lost is made again
// and counts once; an error that remains, a dial error too (rueidis makes
// the call again on a new connection after the one it was sent on broke,
// and answers that dial's error when its own retries are bounded), leaves
// the outcome unknown and says so: counting down again may count twice.
func (l *CountDownLatch) CountDown(ctx context.Context) error {
	if err := checkCtx(ctx); err != nil {
		return l.fail("count down", err)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.cfg.releaseTimeout)
	defer cancel()
	// One record per call: a CountDown whose reply was lost is made again
	// and counts once (callRecorded).
	record := l.c.recordKey("redisson_countdownlatch_latch", l.key)
	if _, err := l.c.callRecorded(ctx, true, func(ctx context.Context, publish string) (int64, error) {
		// Ended at that bound, not cut by a deadline rueidis sees, which
		// closed the connection renewals share (withoutDeadline).
		return generated.LatchCountDown(withoutDeadline(ctx), l.c.rc, l.key, l.channel, record, publish, l.c.recordTTL)
	}); err != nil {
		return l.fail("count down", mayHaveRun(notCount(err), "the latch may have been counted down; counting down again may count twice"))
	}
	return nil
}

// Count returns the current count (0 when the latch is not counting). A
// count past 2^53 - 1, which a Redisson latch may hold (it counts a long),
// reads as 2^53 - 1.
func (l *CountDownLatch) Count(ctx context.Context) (int64, error) {
	if err := l.c.checkHandle(ctx); err != nil {
		return 0, l.fail("count", err)
	}
	n, err := generated.LatchCount(ctx, l.c.rc, l.key)
	if err != nil {
		return 0, l.fail("count", notCount(err))
	}
	return n, nil
}

// Await waits until the count reaches zero or ctx ends. It returns at once
// on a latch that is not counting. Waiting is notified: the message that
// announces zero wakes every waiter.
func (l *CountDownLatch) Await(ctx context.Context) error {
	_, err := l.await(ctx, -1)
	return err
}

// AwaitTimeout waits at most d for the count to reach zero and reports
// whether it did. A wait that ends while the server does not answer its last
// read of the count, or its subscription to the latch's messages, is false
// with a *NotAcquiredError with Unanswered (an outage, not a count still
// above zero), as a semaphore's TryAcquire.
func (l *CountDownLatch) AwaitTimeout(ctx context.Context, d time.Duration) (bool, error) {
	if d < 0 {
		return false, l.fail("await", invalidf("negative wait %s", d))
	}
	return l.await(ctx, d)
}

func (l *CountDownLatch) await(ctx context.Context, wait time.Duration) (bool, error) {
	if err := l.c.checkHandle(ctx); err != nil {
		return false, l.fail("await", err)
	}
	// unanswered: the last read failed without the server's answer, as
	// for a lock (NotAcquiredError.Unanswered); an answer clears it.
	unanswered := true
	ok, err := l.c.waitNotified(ctx, l.channel, true, wait, func(actx context.Context) (bool, time.Duration, error) {
		// Close cuts the read short, as it ends the wait: rueidis makes a
		// read again on a broken connection for as long as its context
		// lasts, so against a server that stopped answering it would
		// hold the wait past Close until ctx ends. A read has nothing to
		// undo. Marked for sharedDial (cutCallKey) also on the wait's
		// first read, which a wait's attempts are not: on a connection
		// rueidis uses one call at a time it watches the read's deadline
		// but not its cancellation, and the read hung on past Close until
		// rueidis gave the connection up (ConnWriteTimeout, 10 s by
		// default). Not a read that does not wait (AwaitTimeout 0, a poll
		// of the count as Count is): cuttable sends it on a goroutine of
		// its own, and a poll has no wait for Close to end.
		rctx := actx
		if wait != 0 {
			rctx = context.WithValue(actx, cutCallKey{}, true)
		}
		rctx, cancel := context.WithCancel(rctx)
		defer cancel()
		defer context.AfterFunc(l.c.closingCtx, cancel)()
		// From the primary: a replica behind it may not have the count
		// yet, and the latch would read as open (readPrimary).
		n, err := readPrimaryAs(rctx, l.c, func() (rueidis.Completed, error) {
			return generated.LatchCountCommand(l.c.rc, l.key)
		}, generated.DecodeLatchCount)
		unanswered = err != nil
		return err == nil && n <= 0, notifyFallback, err
	})
	if errors.Is(err, errSubscribeUnanswered) {
		// Ran out with the subscription unconfirmed: unanswered too.
		err, unanswered = nil, true
	}
	if err != nil {
		return false, l.fail("await", notCount(err))
	}
	if !ok && unanswered {
		// The wait ran out (AwaitTimeout) on an outage, not on the count.
		return false, &NotAcquiredError{Name: l.name, Unanswered: true,
			msg: fmt.Sprintf("scriptlock: latch %q: await within %s", l.name, wait)}
	}
	return ok, nil
}

// Delete removes the latch whatever its count, releasing every waiter, and
// reports whether there was one. It records its answer for a minute
// (redisson_countdownlatch_latch:{name}:...): made again after its reply was
// lost, it answers as the first attempt did and deletes nothing, so a count
// set since survives. An error that remains, a dial error too (rueidis makes
// the call again on a new connection after the one it was sent on broke,
// and answers that dial's error), leaves the outcome unknown and says so.
// A name another kind of lock holds is ErrWrongKind, and the lock is left
// alone.
func (l *CountDownLatch) Delete(ctx context.Context) (bool, error) {
	if err := l.c.checkHandle(ctx); err != nil {
		return false, l.fail("delete", err)
	}
	ok, err := l.c.deleteRecorded(ctx, "redisson_countdownlatch_latch", l.key, func(ctx context.Context, record, publish string, slack time.Duration) (bool, error) {
		return generated.LatchDelete(ctx, l.c.rc, l.key, l.channel, record, publish, l.c.recordTTL, slack)
	})
	if err != nil {
		return false, l.fail("delete", mayHaveRun(notCount(err), "the latch may have been deleted; deleting again may delete a count set since"))
	}
	return ok, nil
}
