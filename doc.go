// Package scriptlock provides distributed locks on Redis for Go services, with
// the semantics and the key layout of Redisson.
//
// Redisson is the most widely used Redis client for Java. Its locks (RLock,
// RFairLock, RReadWriteLock, RSemaphore, RPermitExpirableSemaphore,
// RCountDownLatch) are Lua scripts over a documented set of Redis keys and
// pub/sub channels. scriptlock uses the same keys, values and messages, so a Go
// service and a Java service can lock the same names (see Redisson
// compatibility below).
//
// Every Redis-side step is a Lua script under scripts/ in the module, called
// through the typed callers in its generated/ package (see cmd/scriptgen).
//
// # Getting started
//
// Create one [Client] per process (or per Redis deployment) on a rueidis
// client, take a handle per lock name, and lock:
//
//	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{"127.0.0.1:6379"}})
//	...
//	locks, err := scriptlock.New(rc) // Close it on shutdown; it never closes rc
//	...
//	m, err := locks.Mutex("order:42") // ErrInvalidName or ErrInvalidArgument; sends nothing
//	...
//	lctx, err := m.Lock(ctx) // or m.TryLock(ctx, 2*time.Second)
//	if err != nil {
//		return err
//	}
//	defer m.Unlock(lctx)
//	token, _ := scriptlock.Fence(lctx) // hand it to the store you write to
//	// work under lctx: it ends if the lock is lost
//
// Handles are cheap, hold no connection and may be shared by goroutines. The
// kinds of lock:
//
//   - [Mutex]: reentrant exclusive lock (Redisson RLock).
//   - [FairMutex]: a Mutex granted in arrival order, with dead waiters evicted
//     after a bounded time (RFairLock).
//   - [RWMutex]: many readers or one writer; waiting writers hold back new
//     readers (RReadWriteLock).
//   - [MultiLock]: several lockers ([Locker]) held as one, all or nothing, on any mix of
//     hash slots and deployments.
//   - [RedLock]: the Redlock algorithm over independent Redis deployments.
//   - [Semaphore]: a count of permits (RSemaphore); [PermitSemaphore]: permits
//     with ids and leases that return when their holder dies
//     (RPermitExpirableSemaphore).
//   - [CountDownLatch]: wait until a count reaches zero (RCountDownLatch).
//   - [LeanMutex]: the plain SET NX lock for hot paths: one SET to take it,
//     one compare-and-delete to release it; not reentrant, a string key that
//     Redisson does not share, waiters that poll, and fencing tokens only
//     with [WithFencing].
//
// Mutex, FairMutex, LeanMutex, RWMutex's two sides, MultiLock and RedLock satisfy
// [Locker], which the middleware (packages middleware/echolock and
// middleware/grpclock) and MultiLock accept.
//
// # Options
//
// [New] takes [Option]s: Client-wide settings ([WithKeyPrefix], [WithLogger],
// [WithObserver], [WithShardedPubSub]) and the defaults of its handles. A
// handle constructor takes [LockOption]s, which override those defaults for
// that handle. Options valid in both places are [SharedOption]s (WithLease,
// WithWatchdog, WithReleaseTimeout, WithFailoverGuard, WithGuardReplicas,
// WithFenceIdle, WithWaiterTimeout, WithRedissonFairQueue, WithFencing); a
// Client-wide option given to a handle constructor does not compile. A handle
// constructor refuses, with [ErrInvalidArgument] naming it, an option that
// has no meaning for its kind (WithLease for a Semaphore). [NewMultiLock] and [NewRedLock] also take
// options of their own ([WithMemberWait], [WithNodeTimeout],
// [WithClockDrift]).
//
// # Owners
//
// A lock is held by an owner, stored in Redis as <client-id>:<owner-id>. The
// client id is a random UUID (122 bits from crypto/rand), so nobody can guess
// a field to release someone else's lock; a fresh owner id is the Client's
// random 64-bit prefix and a counter, never repeated within the Client. The
// owner of a Lock call is the one its context names:
// the context an earlier Lock returned, or [WithOwner]'s. Without one, every
// Lock call is a new owner with a fresh id, so goroutines sharing a handle
// exclude each other as with sync.Mutex.
//
// The context Lock returns carries its owner, so nested code that locks the
// same name with it re-enters the lock (the hold count rises) instead of
// blocking on itself. [Mutex.Unlock] gives back one hold of the owner its
// context names; the last one releases the lock. A context naming no owner, or
// an owner that does not hold the lock, gets [ErrNotHeld] and changes nothing.
// Use WithOwner to hold locks as one owner across API boundaries; the
// middleware uses one owner per request. Owner ids are scoped to the Client
// (the owner is <client-id>:<owner-id>): another Client or process naming the
// same id is a different owner.
//
// # Leases
//
// A lock held without an explicit lease is kept by the watchdog: one scheduler
// per Client renews a 30 s lease every 10 s ([WithWatchdog]), all due locks in
// one pipelined round trip, until Unlock. A lock taken with an explicit lease
// ([Mutex.LockWithLease], [Mutex.TryLockWithLease], or [WithLease] on the
// Client or handle) is never renewed and expires on its own. Extend gives
// such a hold a new lease, counted from now, and moves the end of its lock
// context with it ([Mutex.Extend]; every kind that satisfies [Extender]); on a
// watchdog-renewed hold it is refused with ErrInvalidArgument, and on a hold
// that is gone it returns ErrNotHeld. Re-entrant releases re-arm the hold's
// lease: the one it was acquired with, or the last Extend's. [Mutex.State]
// reads whether a lock is held, the hold count of the context's owner and the
// remaining lease in one round trip.
//
// # The lock context
//
// Lock returns a context derived from the caller's. It ends, and
// context.Cause reports why:
//
//   - context.Canceled: its hold was released by Unlock.
//   - [ErrClosed]: the Client was closed ([Client.Close]).
//   - [ErrLockLost]: the lock was lost: a renewal found it gone or owned by
//     someone else, its release failed for good, a Mutex, FairMutex or
//     RWMutex (read or write) re-entry of its owner (shared through its
//     context) found the owner's hold gone from the lock (another owner
//     holding it, or, for FairMutex, no lock and others first in line), or
//     no grant or renewal was confirmed in time.
//   - the parent's cause, when the caller's context ends first.
//
// Each hold keeps the server lease as of its last confirmed grant or renewal,
// counted from when that request was sent. Its context ends at that point
// minus a margin for clock-rate drift (2% of the lease plus 5 ms), whether or
// not a reply ever comes, so it ends before another owner can be granted the
// lock. A process that is itself paused past that point (a GC pause, a stopped
// VM) cannot act on it in time: guard side effects with the fencing token.
//
// # Acquisition and release
//
// Every Redis call of an acquisition is bounded by the caller's context (a
// RedLock's also by its per-node timeout), so Lock and TryLock return within
// their deadline plus about one round trip even against a server that stopped
// answering. An acquisition whose outcome is unknown (a timeout, a dropped
// connection) is undone by owner in the background, idempotently, until that
// succeeds or the lease it may have set has run out. Waiting is notified: one
// shared subscription per Client wakes waiters on the release message, with
// the holder's remaining lease as a fallback timer. A Mutex release wakes one
// Go waiter, the longest registered, by name (and still publishes Redisson's
// "0" for Java waiters), so a release costs one retry rather than one per
// waiting process; a LeanMutex's waiters poll instead.
//
// Replies by which Redis ran nothing and asks to be called again (TRYAGAIN
// while a Cluster slot migrates, CLUSTERDOWN, LOADING, READONLY, MASTERDOWN,
// NOREPLICAS, BUSY, OOM, MISCONF), and calls never
// sent because their node could not be dialled (down, or replaced in a
// failover the client has not seen yet), are retried, 2 ms
// doubling to 100 ms apart: by Lock until its context ends, by TryLock until
// its wait ends (a TryLock with no wait returns the reply), and by Unlock, a
// semaphore's Release and a latch's CountDown within the release timeout,
// whatever their context. An attempt of a waiting Lock or TryLock whose
// connection breaks under it (the node died or failed over) may have run: it
// is undone by owner first, then the wait goes on.
//
// Unlock runs detached from its caller's context, bounded by the release
// timeout ([WithReleaseTimeout], 5 s), so a cancelled request still releases
// its lock; a retried release whose first reply was lost reports the first
// outcome. A release that fails for good drops the hold locally: no more
// renewals, its context ends with ErrLockLost, and the lease runs out on the
// server. Close refuses new acquisitions, waits for those in flight, gives back
// grants that arrive after it began and ends every hold's context.
//
// # Errors
//
// Every condition below satisfies errors.Is against its sentinel. Returned
// errors say the package, the operation and the lock's name once, then the
// condition: scriptlock: unlock "order:42": lock not held by this owner.
//
//   - [ErrNotAcquired]: a TryLock or TryAcquire wait ran out while others
//     held the lock or the permits; the error is a [*NotAcquiredError],
//     for a lock with the holder's remaining lease, and, for a lock or a
//     semaphore alike, with Unanswered when the server stopped answering
//     the wait's last attempt or did not confirm its subscription to
//     releases (also a latch's AwaitTimeout, with false).
//   - [ErrNotHeld]: Unlock or Extend by a non-owner or after the lock
//     expired; nothing changes. [ErrUnknownPermit] and [ErrPermitExpired] (PermitSemaphore) are
//     ErrNotHeld too.
//   - [ErrLockLost]: the cause of a lock context that ended because the lock
//     was lost.
//   - [ErrInvalidName], [ErrInvalidArgument]: bad input; nothing is sent to
//     Redis.
//   - [ErrClosed]: the Client is closed.
//   - [ErrNotReplicated]: the failover guard undid an acquisition, or kept
//     the old deadline of an Extend, that not enough replicas acknowledged.
//   - [ErrQuorum]: a RedLock did not reach a majority; the error is a
//     [*QuorumError] saying why each node refused.
//   - [ErrUpgrade]: an RWMutex owner holding a read lock asked for the write
//     lock, which would wait for itself forever.
//   - [ErrNotReentrant]: a LeanMutex's holder asked for it again.
//   - [ErrWrongKind]: a LeanMutex and a lock of the hash layout (Mutex,
//     FairMutex, RWMutex, a Redisson lock) were given the same name, a
//     Mutex or FairMutex the name of a read-write lock or the reverse, or a
//     Semaphore, PermitSemaphore or CountDownLatch the name of another kind
//     of lock; nothing changes. State, IsLocked and ForceUnlock of each
//     lock kind answer so too, and ForceUnlock leaves the other lock alone.
//   - [ErrFenceCounter]: no fencing token can be drawn from the lock's
//     counter (it holds no integer, a negative one, or one of 2^53 - 1 or
//     more); the acquisition changes nothing.
//   - [ErrOutcomeUnknown]: a call that changes a count or deletes a key
//     failed after it may have run (its reply lost, its context ended while
//     it was on its way, or rueidis made it again on a new connection whose
//     dial failed); calling again may change things twice. errors.Is and
//     errors.As still find the context's or the network's error.
//
// A wait ended by its context returns an error that errors.Is the context's
// error. Redis and network failures are wrapped with the operation and the
// lock name, and never reported as contention: a TryLock or TryAcquire wait
// that ends while the server does not answer its last attempt, or its
// subscription to releases, is ErrNotAcquired, but its *NotAcquiredError
// has Unanswered set, and the lock may be free.
//
// # Fencing tokens
//
// Every fresh acquisition of a Mutex, a FairMutex, an RWMutex's write side or
// a LeanMutex with [WithFencing] draws a token from the counter redisson_lock_token:{name}; [Fence] returns it
// from the lock context, and [FenceOf] finds one member's token in a
// MultiLock's context. Tokens of one lock name rise strictly across
// acquisitions, lock expiries and Redis restarts, as long as the server's
// clock does not step back, except after a restart that loads an older copy
// of the counter than its last grant left (an RDB snapshot, or an AOF with
// appendfsync everysec), or a failover to a replica the last grants had not
// reached: the tokens handed out since that copy are handed out again. A
// store that records the token on the row before reading it (UPDATE ... SET
// fence = $token WHERE ... AND fence < $token) and writes only while it is
// still there (UPDATE ... WHERE ... AND fence = $token) refuses a holder whose
// lease ran out while it was paused. The
// counter expires [WithFenceIdle] after it started (default 7 days; grants do
// not extend it); a new counter starts from the server's clock in
// microseconds, above every token handed out before. RedLock has no fencing
// token.
//
// # Redisson compatibility
//
// Go and Java share, on the same name: Mutex and RLock (the lock hash, its
// channel, re-entry, renewal, force unlock and the fencing counter); RWMutex
// and RReadWriteLock; Semaphore and RSemaphore; PermitSemaphore and
// RPermitExpirableSemaphore (each side releases the other's permits);
// CountDownLatch and RCountDownLatch. FairMutex excludes RLock and RFairLock
// through the lock hash, but keeps its own O(log n) queue under keys Redisson
// never reads; [WithRedissonFairQueue] queues by Redisson's protocol instead,
// so Go and Java waiters share one FIFO queue. The layout, for a lock named
// order:42: the lock is the hash order:42 with a field per owner holding its
// hold count and a PEXPIRE lease; a release publishes 0 on
// redisson_lock__channel:{order:42}. Use the same [WithKeyPrefix] as the Java
// side's names.
//
// On Redis Cluster a key's hash slot is computed from its hash tag, the part
// between the first { and the next }, when it has one; keys with the same tag
// live on the same node, so one script may touch them all. Every companion key
// of a lock wraps the lock's name in braces, as Redisson does, and a name that
// already has a hash tag (user:{42}:wallet) keeps it, so all keys of one lock
// share a slot. A name with a { but no complete, non-empty tag, or with a }
// and no tag, is refused with ErrInvalidName, as is an empty name, one longer
// than [MaxNameLen], and a name whose key has the form of another lock's
// companion key (redisson_lock_token:{order:42}, a PermitSemaphore's lease
// set {order:42}:timeout, or a read hold's lease key ending in
// :rwlock_timeout:<n>), which a lock of that name would change.
//
// # The failover guard
//
// Redis replicates asynchronously: a primary can grant a lock and fail before
// any replica has the write, and the replica promoted in its place then grants
// the same lock again. The failover guard closes that window for
// acquisitions. It is on by default for Mutex, FairMutex, LeanMutex and both sides of
// RWMutex (and so for MultiLock and RedLock members), and for Semaphore and
// PermitSemaphore, whose permits a promoted replica would otherwise hand out
// again. When the primary has
// replicas, each acquisition is sent together with WAIT 1; if no replica
// acknowledged it within the guard timeout (100 ms), the acquisition is undone
// and fails with ErrNotReplicated. Watchdog renewals, Extend and an RWMutex
// read release that leaves read holds are sent with WAIT 1 too: one no
// replica acknowledged does not move the lock context's deadline later (an
// Extend fails with ErrNotReplicated), so the context ends before a promoted
// replica's old expiry. [WithFailoverGuard] changes the timeout or
// turns the guard off. WAIT 1 hears from one replica; with several,
// [WithGuardReplicas] makes the guard wait for more of them, or for every
// one ([GuardAllReplicas]), so that no replica a failover may promote lacks
// the write. It does not protect releases: the fencing token does.
//
// # Keys left behind
//
// After Unlock, Close, expiry or a failed acquisition, a lock leaves only its
// fencing counter (until WithFenceIdle after it started; a new counter starts
// from the server's clock in microseconds, above every earlier token) and
// release latches, redisson_unlock_latch:{name}:..., each kept for at most the
// release timeout (at least one second; the latch of a release that undoes an
// acquisition whose reply was lost, for a minute). A Mutex writes a latch only for a
// release that gives up one of several holds, or one whose hold had already
// ended or passed its loss deadline locally; the usual last release writes
// none. A FairMutex waiter's queue entry, an RWMutex pending writer that
// could not be withdrawn, and a Mutex's Go waiter set
// (scriptlock_lock_waiters:{name}) whose waiters stopped calling expire with
// the waiter timeout ([WithWaiterTimeout]).
//
// # Observability
//
// [WithObserver] reports acquisitions, holds, releases, renewals and guard
// waits to an [Observer]; the module github.com/scriptlock/scriptlock/otel
// implements one with OpenTelemetry metrics and spans. Background events (a
// lost lock, a failed renewal) are logged through [WithLogger]'s slog.Logger.
//
// # Requirements
//
// Redis 7.0 or newer: read-only scripts (lock state, counts, a Semaphore's
// available permits) run with EVALSHA_RO, which Redis 7.0 introduced, and release
// messages on Redis Cluster use sharded pub/sub (SPUBLISH, also 7.0). The tests
// run against redis-server 7.0.15, standalone, replicated, as a cluster and
// under Sentinel. Go 1.26 and 1.27 are supported and tested.
package scriptlock
