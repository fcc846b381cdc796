package scriptlock

import (
	"context"
	"hash/maphash"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/generated"
)

// DefaultRedissonThreadWaitTime is RFairLock's default threadWaitTime: how
// much each waiter's score in redisson_lock_timeout:{name} grows with its
// place in the queue, and so how long a dead waiter can hold the queue up.
const DefaultRedissonThreadWaitTime = 5 * time.Minute

// WithRedissonFairQueue makes FairMutex queue by Redisson's RFairLock protocol
// on redisson_lock_queue:{name} and redisson_lock_timeout:{name}, so Go and
// Java (Redisson) waiters share one FIFO queue on the same name. Use it only
// where Java services lock that name with RFairLock, and give it the
// threadWaitTime the Java side uses (0: Redisson's default, 5 minutes).
//
// The costs are Redisson's: scores come from each client's clock (keep the
// hosts on NTP), every acquisition from the queue rewrites every waiter's
// score (O(waiters)), giving up a wait rewrites the scores behind the waiter,
// and a waiter that died is evicted only when its score passes, up to
// threadWaitTime times its place in the queue later: WithWaiterTimeout does
// not bound that, but still sets how often a Go waiter calls Redis again
// while it waits (every third of it, sooner when its reply says the waiter
// ahead of it, or the holder's lease for the first in line, ends first, as
// a Redisson waiter calls again then). Without this option FairMutex keeps its own
// queue under keys Redisson never reads (see FairMutex). For FairMutex only.
func WithRedissonFairQueue(threadWaitTime time.Duration) SharedOption {
	return sharedOption{"WithRedissonFairQueue", kindFairMutex, func(c *config) {
		if threadWaitTime < 0 {
			c.fail("negative Redisson threadWaitTime %s", threadWaitTime)
			return
		}
		if threadWaitTime == 0 {
			threadWaitTime = DefaultRedissonThreadWaitTime
		}
		c.redissonFair = threadWaitTime
	}}
}

// fairKeys names a FairMutex's queue keys. Our own queue never uses
// Redisson's names: its scores mean something else (server-clock liveness
// deadlines), and Redisson's scripts would evict our waiters or we theirs.
func fairKeys(key string, redisson bool) (queue, timeouts string) {
	if redisson {
		return redissonName("redisson_lock_queue", key), redissonName("redisson_lock_timeout", key)
	}
	return redissonName("scriptlock_fair_queue", key), redissonName("scriptlock_fair_timeout", key)
}

// queueWait is the waitTime a Redisson-protocol call passes: the TryLock wait
// when there is one, else threadWaitTime (as RedissonFairLock does).
func (f *FairMutex) queueWait(wait time.Duration) time.Duration {
	if wait > 0 {
		return wait
	}
	return f.threadWait
}

// acquireCommand builds the acquire call of the handle's queue protocol (for
// the failover guard, which sends it beside WAIT).
func (f *FairMutex) acquireCommand(serverLease time.Duration, field string, wait time.Duration, publish string, rewake bool) (rueidis.Completed, error) {
	m, c := &f.m, f.m.c
	if f.threadWait > 0 {
		return generated.FairRedissonAcquireCommand(c.rc, m.key, f.queue, f.timeouts, m.fence, m.channel,
			serverLease, field, f.queueWait(wait), time.Now(), wait != 0, m.cfg.fenceIdle, publish, f.threadWait)
	}
	return generated.FairAcquireCommand(c.rc, m.key, f.queue, f.timeouts, m.fence, f.wake,
		serverLease, field, f.ctlFor(wait != 0, rewake), publish)
}

func (f *FairMutex) decodeAcquire(reply rueidis.RedisResult) (fairReply, error) {
	if f.threadWait > 0 {
		r, err := generated.DecodeFairRedissonAcquire(reply)
		return fairReply{Status: r.Status, Value: r.Value, Head: r.Head}, err
	}
	r, err := generated.DecodeFairAcquire(reply)
	return decodeFairAcquire(r), err
}

func (f *FairMutex) acquireCall(ctx context.Context, serverLease time.Duration, field string, wait time.Duration, publish string, rewake bool) (fairReply, error) {
	m, c := &f.m, f.m.c
	if f.threadWait > 0 {
		r, err := generated.FairRedissonAcquire(ctx, c.rc, m.key, f.queue, f.timeouts, m.fence, m.channel,
			serverLease, field, f.queueWait(wait), time.Now(), wait != 0, m.cfg.fenceIdle, publish, f.threadWait)
		return fairReply{Status: r.Status, Value: r.Value, Head: r.Head}, err
	}
	r, err := generated.FairAcquire(ctx, c.rc, m.key, f.queue, f.timeouts, m.fence, f.wake,
		serverLease, field, f.ctlFor(wait != 0, rewake), publish)
	return decodeFairAcquire(r), err
}

// fairReply is an acquisition attempt's reply in either queue protocol, in
// the shape of Redisson's: status 1 acquired (value: the fencing token), 2
// re-entered, 0 refused (value: the holder's remaining lease in ms; head 1
// when the caller is first in line; foreign, our protocol's head only: the
// holder is not a scriptlock client).
type fairReply struct {
	Status, Value, Head int64
	Foreign             bool
}

// decodeFairAcquire unpacks FairAcquire's single-integer reply.
func decodeFairAcquire(r int64) fairReply {
	switch {
	case r > 0:
		return fairReply{Status: 1, Value: r}
	case r == 0:
		return fairReply{Status: 2}
	}
	x := -1 - r
	return fairReply{Value: x >> 2, Head: x & 1, Foreign: x&2 != 0}
}

// cancelCall takes field out of the queue; repeat: an earlier attempt of
// this leave may have run (and failed at its publish), so the head is told
// even when field is gone.
func (f *FairMutex) cancelCall(ctx context.Context, field string, wait time.Duration, publish string, repeat bool) error {
	m, c := &f.m, f.m.c
	var err error
	if f.threadWait > 0 {
		_, err = generated.FairRedissonCancel(ctx, c.rc, m.key, f.queue, f.timeouts, m.channel, field, f.queueWait(wait), publish, time.Now(), repeat)
	} else {
		_, err = generated.FairCancel(ctx, c.rc, m.key, f.queue, f.timeouts, f.wake, field, publish, repeat)
	}
	return err
}

// releaseCall runs the release of the handle's queue protocol: 0 not held,
// 1 still held, 2 released. An undo whose owner waits on (r.keep) puts the
// owner back first in line when it frees the lock.
func (f *FairMutex) releaseCall(ctx context.Context, r releaseCall, field string) (int64, error) {
	m, c := &f.m, f.m.c
	if f.threadWait > 0 {
		res, err := generated.FairRedissonRelease(ctx, c.rc, m.key, f.queue, f.timeouts, m.channel, r.latch, m.fence, r.lease, field, time.Now(), r.publish, r.latchTTL, r.token,
			r.keep.on, f.queueWait(r.keep.wait))
		return res.Status, err
	}
	var requeue time.Duration
	if r.keep.on {
		requeue = f.waiterTimeout
	}
	return generated.FairRelease(ctx, c.rc, m.key, f.queue, f.timeouts, f.wake, r.latch, m.fence, f.javaQueue, m.channel, r.lease, field, r.publish, r.latchTTL, r.retry, r.vouched, r.token, requeue)
}

// forceUnlockCall deletes the lock and tells the first waiter of both queue
// protocols, whichever the handle uses: waiters of the other protocol can
// queue on the name too (a fleet moving to WithRedissonFairQueue, or the mix
// the Client logs), and one nobody tells sleeps beside a free lock until it
// calls again. A force unlock is rare; the extra keys cost nothing that
// matters.
func (f *FairMutex) forceUnlockCall(ctx context.Context, record, publish string, slack time.Duration) (bool, error) {
	m, c := &f.m, f.m.c
	var ns [5]string
	redissonNames(ns[:], m.key, "scriptlock_fair_queue", "scriptlock_fair_wake", "redisson_lock_queue", "redisson_lock_timeout", "scriptlock_fair_timeout")
	return generated.FairForceUnlockBoth(ctx, c.rc, m.key, ns[0], ns[1], ns[2], ns[3], m.channel, record, ns[4], time.Now(), publish, c.recordTTL, slack)
}

// mixedCheckEvery spaces a Client's checks of one lock name for the other
// protocol's waiters; names share mixedSlots slots.
const (
	mixedCheckEvery = time.Minute
	mixedSlots      = 64
)

// noteMixedQueues logs that waiters of the other fair-queue protocol wait on
// this name: both sides still exclude each other through the lock hash, but
// neither orders the other's waiters, so FIFO across them is lost (typically
// a Java RFairLock beside a FairMutex without WithRedissonFairQueue). It runs
// when a caller has to queue, at most once per mixedCheckEvery per slot of
// lock names on the Client, not per handle: handles are often made per
// request, and a read per queued caller would cost more than the queueing.
// Uncontended locking pays nothing, contended locking one read now and then.
func (f *FairMutex) noteMixedQueues(ctx context.Context) {
	c := f.m.c
	slot := &c.mixedChecked[maphash.String(mixedSeed, f.m.key)%mixedSlots]
	last := slot.Load()
	now := time.Now().UnixNano()
	if (last != 0 && now-last < int64(mixedCheckEvery)) || !slot.CompareAndSwap(last, now) {
		return
	}
	other, _ := fairKeys(f.m.key, f.threadWait == 0)
	mixed, err := generated.FairOtherQueue(ctx, c.rc, other)
	if err != nil || !mixed {
		return
	}
	c.log.Warn("fair lock has waiters queued by the other protocol: they are not ordered with this handle's waiters; "+
		"use WithRedissonFairQueue on every Go handle where Java services use RFairLock on the name",
		"lock", f.m.name, "other_queue", other, "redisson_protocol", f.threadWait > 0)
}

// mixedSeed hashes lock names to noteMixedQueues's slots.
var mixedSeed = maphash.MakeSeed()
