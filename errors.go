package scriptlock

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel errors. Every error the package returns for one of these conditions
// satisfies errors.Is against the sentinel; Redis and network failures are wrapped
// and never reported as one of them.
//
// The package returns them wrapped, with the operation and the lock's name,
// and says each thing once:
//
//	scriptlock: unlock "order:42": lock not held by this owner
//
// so the sentinels' own texts carry no "scriptlock:" prefix.
var (
	// ErrNotHeld: Unlock or Extend by an owner that does not hold the lock
	// (never locked, already released, expired, or held by someone else).
	ErrNotHeld = errors.New("lock not held by this owner")
	// ErrNotAcquired: a TryLock or TryAcquire wait ran out while others held
	// the lock or the permits. For locks the returned error is a
	// *NotAcquiredError carrying the holder's remaining lease (or Unanswered:
	// the server did not answer the wait's last attempt, or its
	// subscription to the lock's releases).
	ErrNotAcquired = errors.New("not acquired")
	// ErrLockLost: the lock was lost while held (lease expired, key deleted,
	// renewal failed). It is the cause of the lock context's cancellation.
	ErrLockLost = errors.New("lock lost")
	// ErrInvalidName: an empty lock name, one longer than MaxNameLen, one
	// with an incomplete hash tag, or one whose key (prefix + name) has the
	// form of another lock's companion key (redisson_lock_token:{...} and the
	// other derived names, or a read hold's ...:rwlock_timeout:<n>) or is one
	// whole hash tag ({x}, whose companion keys are x's).
	ErrInvalidName = errors.New("invalid lock name")
	// ErrInvalidArgument: a zero or negative lease or wait, a nil client or
	// context, an option a kind of lock does not take, and similar.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrClosed: the Client was closed.
	ErrClosed = errors.New("client closed")
	// ErrNotReplicated: the failover guard found online replicas but
	// fewer than it waits for (one, or WithGuardReplicas) acknowledged the
	// write in time; an acquisition was undone (a semaphore's permits given
	// back), a lock's Extend left the hold's deadline and lease as they were
	// (a PermitSemaphore's Extend: the primary has the new lease, a
	// failover may bring back the earlier one).
	ErrNotReplicated = errors.New("write not acknowledged by enough replicas")
	// ErrQuorum: a RedLock could not reach a majority of its nodes.
	ErrQuorum = errors.New("quorum not reached")
	// ErrNotReentrant: Lock on a LeanMutex by the owner that already holds
	// it. A LeanMutex does not count holds, so waiting would never end.
	ErrNotReentrant = errors.New("lock is not reentrant")
	// ErrWrongKind: the lock's key holds another kind of lock: a LeanMutex
	// (a string key) and a Mutex, FairMutex, RWMutex or Redisson lock (a
	// hash) were given the same name, an RWMutex (a hash with a mode field)
	// and a Mutex (a hash without one; Mutex also stands for a Redisson
	// RLock here, RWMutex for an RReadWriteLock), or a Semaphore,
	// PermitSemaphore or CountDownLatch (a count) the name of one of those.
	// Nothing was changed.
	ErrWrongKind = errors.New("lock name used by another kind of lock")
	// ErrFenceCounter: the lock's fencing-token counter
	// (redisson_lock_token:{<name>}) holds no integer (another program's
	// value under its name), a negative one, or one of 2^53 - 1 or more,
	// past which tokens could no longer be told apart (the scripts that
	// draw them count in Lua's doubles): no token can be drawn that rises
	// above the last. The acquisition changed nothing.
	ErrFenceCounter = errors.New("no fencing token can be drawn from the lock's counter")
	// ErrOutcomeUnknown: a call that changes a count or deletes a key
	// (ForceUnlock, a semaphore's Release, AddPermits, SetPermits,
	// DrainPermits, TrySetPermits and Delete, a latch's CountDown,
	// TrySetCount and Delete) failed after it may have run: its reply was
	// lost, or its context (for Release and CountDown, the release timeout)
	// ended while it was on its way, or rueidis made it again on a new
	// connection after the one it was sent on broke and that dial failed.
	// Calling again may change things twice; read the state first. The
	// context's or the network's error stays reachable through errors.Is
	// and errors.As.
	ErrOutcomeUnknown = errors.New("outcome unknown")
)

// MaxNameLen is the longest lock name accepted, in bytes.
const MaxNameLen = 1024

// NotAcquiredError is returned when a wait for a lock ends without acquiring it
// because another owner kept holding it, or because the server did not answer
// its last attempt, or its subscription to releases, before the wait ended
// (Unanswered). A Semaphore's or
// PermitSemaphore's TryAcquire returns it too, when no permits became free
// in time or the server did not answer (Name is then the semaphore's), and
// a CountDownLatch's AwaitTimeout whose last read of the count the server
// did not answer (Unanswered; Name is the latch's).
// errors.Is(err, ErrNotAcquired) is true.
type NotAcquiredError struct {
	Name string
	// Remaining is the holder's remaining lease as last seen (0 when unknown or
	// held without expiry; always 0 for a semaphore).
	Remaining time.Duration
	// Unanswered: the wait's end cut off an attempt still waiting for the
	// server's answer (a server that stopped answering, a stalled link), or
	// the wait's subscription to releases (SUBSCRIBE, SSUBSCRIBE), made
	// after an attempt found the lock held, while the server had not
	// confirmed it, or came before any attempt while an earlier wait of an
	// owner shared through the context was still leaving the line, waiting
	// for its answer. The lock (or permits) may be free: the server, not
	// another owner, kept it.
	Unanswered bool
	// msg, when set, is the error's text for a semaphore's TryAcquire
	// (without the Unanswered part).
	msg string
}

func (e *NotAcquiredError) Error() string {
	if e.msg != "" {
		if e.Unanswered {
			return e.msg + ": the server did not answer before the wait ended"
		}
		return e.msg
	}
	if e.Unanswered {
		return fmt.Sprintf("scriptlock: lock %q: %s: the server did not answer before the wait ended", e.Name, ErrNotAcquired)
	}
	return fmt.Sprintf("scriptlock: lock %q: %s: held by another owner (remaining lease %s)", e.Name, ErrNotAcquired, e.Remaining)
}

// Unwrap makes errors.Is(err, ErrNotAcquired) true.
func (e *NotAcquiredError) Unwrap() error { return ErrNotAcquired }

// invalidf is an ErrInvalidArgument without the package prefix, for opError
// (or a constructor) to wrap.
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidArgument, fmt.Sprintf(format, args...))
}

// opError is the error an operation on a named lock returns: the package
// prefix once, the operation, the name, the cause.
func opError(op, name string, err error) error {
	return fmt.Errorf("scriptlock: %s %q: %w", op, name, err)
}

// nested carries an error the package returned inside another of its errors
// (a MultiLock member's, a RedLock node's) without repeating the prefix.
func nested(err error) error {
	if err == nil {
		return nil
	}
	return nestedError{err}
}

type nestedError struct{ err error }

func (e nestedError) Error() string { return strings.TrimPrefix(e.err.Error(), "scriptlock: ") }
func (e nestedError) Unwrap() error { return e.err }

// subError is a sentinel that is also another: errors.Is matches both.
type subError struct {
	msg    string
	parent error
}

func (e *subError) Error() string        { return e.msg }
func (e *subError) Is(target error) bool { return target == e.parent }
