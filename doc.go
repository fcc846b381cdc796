// Package scriptlock provides distributed locks on Redis with Redisson's
// semantics and key layout: a reentrant Mutex with watchdog lease renewal,
// FairMutex, MultiLock, RedLock, RWMutex, Semaphore, PermitSemaphore,
// CountDownLatch and fencing tokens.
//
// Every Redis-side step is a Lua script under scripts/, called through the
// typed callers in generated/ (see cmd/scriptgen).
//
// # Owners
//
// A lock is held by an owner, <client-id>:<owner-id> in Redis. The owner of
// a Lock call is the one its context names: the context an earlier Lock
// returned, or WithOwner's. Without one, every Lock call is a new owner, so
// goroutines sharing one handle exclude each other as with sync.Mutex. The
// same owner locking again re-enters; Unlock gives back one hold of the
// owner its context names, and a context naming no owner holds nothing
// (ErrNotHeld).
//
// # The hold lifecycle
//
// Mutex, FairMutex and both sides of RWMutex (and so MultiLock and RedLock
// members) share one lifecycle:
//
//   - Every Redis call of an acquisition is bounded by the caller's context
//     (RedLock: also by the node timeout). An acquisition whose outcome is
//     unknown is undone by owner, idempotently, in the background.
//   - The context Lock returns ends with context.Canceled when the hold is
//     released, ErrClosed when the Client closes, and ErrLockLost when the
//     lock is lost. Each hold keeps the server lease as of its last confirmed
//     grant or renewal, counted from when that request was sent; its context
//     ends no later than that point minus a drift margin of 2% of the lease
//     plus 5 ms, whether or not a renewal reply ever comes. A process that is
//     itself paused past that point cannot act on it: guard side effects
//     with the fencing token.
//   - A release that fails for good drops the hold locally: no renewal, its
//     context ends with ErrLockLost, and the lease runs out on the server.
//     Re-entrant releases and renewals re-arm the lease the hold was acquired
//     with.
//   - Close refuses new acquisitions, waits for those in flight, gives back
//     grants that arrive after it began and ends every hold's context.
//
// # Keys left behind
//
// After Unlock, Close, expiry or a failed acquisition, a lock leaves only its
// fencing counter, redisson_lock_token:{name} (it expires WithFenceIdle after
// it started, default 7 days; a new counter starts from the server's clock in
// microseconds, above every earlier token), and release latches,
// redisson_unlock_latch:{name}:..., each kept for at most the release timeout
// (at least one second). A Mutex writes a latch only for a release that gives
// up one of several holds, or one whose hold had already ended or passed its
// loss deadline locally; the usual last release writes none.
package scriptlock
