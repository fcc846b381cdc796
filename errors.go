package scriptlock

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors. Every error the package returns for one of these conditions
// satisfies errors.Is against the sentinel; Redis and network failures are wrapped
// and never reported as one of them.
var (
	// ErrNotHeld: Unlock or Extend by an owner that does not hold the lock
	// (never locked, already released, expired, or held by someone else).
	ErrNotHeld = errors.New("scriptlock: lock not held by this owner")
	// ErrNotAcquired: TryLock's wait ran out while another owner held the lock.
	// The returned error is a *NotAcquiredError carrying the holder's remaining lease.
	ErrNotAcquired = errors.New("scriptlock: lock not acquired")
	// ErrLockLost: the lock was lost while held (lease expired, key deleted,
	// renewal failed). It is the cause of the lock context's cancellation.
	ErrLockLost = errors.New("scriptlock: lock lost")
	// ErrInvalidName: an empty lock name or one longer than MaxNameLen.
	ErrInvalidName = errors.New("scriptlock: invalid lock name")
	// ErrInvalidArgument: a zero or negative lease or wait, a nil client, and similar.
	ErrInvalidArgument = errors.New("scriptlock: invalid argument")
	// ErrClosed: the Client was closed.
	ErrClosed = errors.New("scriptlock: client closed")
	// ErrNotReplicated: the failover guard found connected replicas but none
	// acknowledged the write in time; the acquisition was undone.
	ErrNotReplicated = errors.New("scriptlock: write not acknowledged by any replica")
	// ErrQuorum: a RedLock could not reach a majority of its nodes.
	ErrQuorum = errors.New("scriptlock: quorum not reached")
	// ErrNotReentrant: Lock on a LeanMutex by the owner that already holds
	// it. A LeanMutex does not count holds, so waiting would never end.
	ErrNotReentrant = errors.New("scriptlock: lock is not reentrant")
	// ErrWrongKind: the lock's key holds another kind of lock: a LeanMutex
	// (a string key) and a Mutex, FairMutex, RWMutex or Redisson lock (a
	// hash) were given the same name. Nothing was changed.
	ErrWrongKind = errors.New("scriptlock: lock name used by another kind of lock")
)

// MaxNameLen is the longest lock name accepted, in bytes.
const MaxNameLen = 1024

// NotAcquiredError is returned when a wait for a lock ends without acquiring it
// because another owner kept holding it. errors.Is(err, ErrNotAcquired) is true.
type NotAcquiredError struct {
	Name string
	// Remaining is the holder's remaining lease as last seen (0 when unknown or
	// held without expiry).
	Remaining time.Duration
}

func (e *NotAcquiredError) Error() string {
	return fmt.Sprintf("scriptlock: lock %q not acquired: held by another owner (remaining lease %s)", e.Name, e.Remaining)
}

// Unwrap makes errors.Is(err, ErrNotAcquired) true.
func (e *NotAcquiredError) Unwrap() error { return ErrNotAcquired }

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidArgument, fmt.Sprintf(format, args...))
}
