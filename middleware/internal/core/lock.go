package core

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock"
)

// NewOwnerID returns a random 128-bit owner id (hex) for one request.
func NewOwnerID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// Acquire takes the lock newLock returns for key, for one request. The lock
// gets a fresh owner, whatever owner ctx carries (an empty WithOwner clears
// it: an owner set by other code may be shared by several requests), and
// code under the lock re-enters it through the returned context, which
// carries that owner. A fresh owner is no shared one, so the release keeps
// the cheapest script. The exception is an owner made by an enclosing
// Acquire of the same request (two lock middlewares in a chain): it is kept,
// so that code under the handler re-enters both locks with the request's
// context. scope tells that request: the enclosing Acquire was given the
// same one. It must differ between requests that may carry one context (a
// handler serving requests of its own through the router with its
// context): those would otherwise share the owner, re-enter each other's
// locks and run at once (Echo: the echo.Context's; gRPC: the call's
// UnaryServerInfo or StreamServerInfo, for calls made in process with the
// handler's context). The returned context is the lock's: it carries
// the fencing token and is cancelled with cause scriptlock.ErrLockLost if the
// lock is lost. release unlocks,
// independently of ctx still being alive; it returns the Unlock error
// (scriptlock.ErrNotHeld after a loss). An error from newLock is returned as
// is (see ClassifyLockError).
func Acquire(ctx context.Context, newLock func(key string) (scriptlock.Locker, error), key string, wait time.Duration, scope any) (lctx context.Context, release func() error, err error) {
	l, err := newLock(key)
	if err != nil {
		return nil, nil, err
	}
	if owner, ok := scriptlock.OwnerFrom(ctx); !ok || ctx.Value(requestOwnerKey{}) != (requestOwner{owner, scope}) {
		ctx = scriptlock.WithOwner(ctx, "")
	}
	lctx, err = l.TryLock(ctx, wait)
	if err != nil {
		return nil, nil, err
	}
	if owner, ok := scriptlock.OwnerFrom(lctx); ok {
		lctx = context.WithValue(lctx, requestOwnerKey{}, requestOwner{owner, scope})
	}
	release = func() error {
		return l.Unlock(context.WithoutCancel(lctx))
	}
	return lctx, release, nil
}

// requestOwnerKey marks, in a lock context Acquire returns, the owner it made
// for the request (a requestOwner), which a nested Acquire of the same scope
// keeps.
type requestOwnerKey struct{}

// requestOwner is an owner Acquire made, and the scope of its request.
type requestOwner struct {
	owner string
	scope any
}

// Failure classifies why a lock could not be taken.
type Failure int

const (
	// Unavailable: Redis could not be reached or answered with an error, or
	// the client is closed. HTTP 503, gRPC Unavailable.
	Unavailable Failure = iota
	// Contended: another owner held the lock for the whole wait.
	// HTTP 409 with Retry-After, gRPC Aborted with RetryInfo.
	Contended
	// Canceled: the request's own context ended while waiting.
	Canceled
	// Invalid: the key makes no valid lock name (for example too long once
	// prefixed). HTTP 400, gRPC InvalidArgument.
	Invalid
)

// ClassifyLockError tells what a Lock/TryLock error means for the request
// whose context is ctx. For Contended, retryAfter is the holder's remaining
// lease as last seen (0 when unknown).
func ClassifyLockError(ctx context.Context, err error) (f Failure, retryAfter time.Duration) {
	if errors.Is(err, scriptlock.ErrInvalidName) {
		return Invalid, 0
	}
	if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
		return Canceled, 0
	}
	if errors.Is(err, scriptlock.ErrNotAcquired) {
		var na *scriptlock.NotAcquiredError
		if errors.As(err, &na) {
			if na.Unanswered {
				// Redis stopped answering while the request waited: no
				// holder was seen, so this is no contention.
				return Unavailable, 0
			}
			retryAfter = na.Remaining
		}
		return Contended, retryAfter
	}
	// A context error inside err is the request's only when the request's
	// context has ended (or its deadline passed a moment before its timer
	// fired). Otherwise it is a call's own timeout: a connection to a Redis
	// that accepts but never answers (a server dying or frozen) fails with
	// an i/o timeout, which errors.Is reads as context.DeadlineExceeded.
	if (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) && requestEnded(ctx) {
		return Canceled, 0
	}
	return Unavailable, 0
}

// KeyCanceled reports whether err, from looking up a request's lock key (a
// KeyFunc, a Func key source), comes from the request's own context having
// ended (the client went away, its deadline passed): the request is then
// canceled, not one with a bad key.
func KeyCanceled(ctx context.Context, err error) bool {
	return (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) && requestEnded(ctx)
}

// requestEnded reports whether ctx has ended or its deadline has passed.
func requestEnded(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// MayFailOpen reports whether a lock error of the Unavailable kind may run
// the handler without the lock when the middleware fails open: only when
// Redis could not be reached or is passing through a state it leaves by
// itself (loading its data, a failover, a busy script, full memory, ...), not
// when the lock was refused for what it is: its name held by another kind of
// lock (ErrWrongKind) or a fencing-token counter no token can be drawn from
// (ErrFenceCounter), invalid lock options (ErrInvalidArgument), a lock the
// request's owner holds and cannot re-enter (ErrNotReentrant, ErrUpgrade), or
// a closed client (ErrClosed), nor when Redis answered with any other error
// reply, anywhere in err (a RedLock's node among others that pass): one
// refusing the client's user (an ACL without the scripts'
// commands: NOPERM, or NOAUTH, WRONGPASS), a command the server or a proxy in
// front of it does not know (ERR unknown command), a script error. Those are
// lasting misconfigurations under which failing open would run every request
// without its lock; they answer as unavailable and never skip the lock.
func MayFailOpen(err error) bool {
	for _, refused := range []error{scriptlock.ErrWrongKind, scriptlock.ErrFenceCounter, scriptlock.ErrInvalidArgument,
		scriptlock.ErrNotReentrant, scriptlock.ErrUpgrade, scriptlock.ErrClosed} {
		if errors.Is(err, refused) {
			return false
		}
	}
	// Every error reply in err, not only the first: a RedLock's QuorumError
	// holds one per node, and a first node's passing refusal (OOM) says
	// nothing of the others' refusals for good (NOPERM) that leave no
	// majority.
	return !anyReply(err, func(re *rueidis.RedisError) bool {
		msg := re.Error()
		for _, passing := range transientReplies {
			if strings.HasPrefix(msg, passing) {
				return false
			}
		}
		return true
	})
}

// anyReply reports whether f holds for an error reply anywhere in err's
// tree (errors.As finds only the first).
func anyReply(err error, f func(*rueidis.RedisError) bool) bool {
	switch e := err.(type) {
	case nil:
		return false
	case *rueidis.RedisError:
		if e != nil && !e.IsNil() && f(e) {
			return true
		}
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return anyReply(u.Unwrap(), f)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if anyReply(e, f) {
				return true
			}
		}
	}
	return false
}

// transientReplies begin the error replies of a reachable Redis that clear
// without anyone's help: the server is loading its data, running a long
// script, in a failover or a resharding, out of memory or unable to persist,
// or at its client limit. Every other error reply is lasting.
var transientReplies = []string{"LOADING ", "BUSY ", "TRYAGAIN ", "CLUSTERDOWN ", "MASTERDOWN ",
	"READONLY ", "NOREPLICAS ", "OOM ", "MISCONF ", "ERR max number of clients"}

// LockLost reports whether lctx was cancelled because its lock was lost.
func LockLost(lctx context.Context) bool {
	return lctx.Err() != nil && errors.Is(context.Cause(lctx), scriptlock.ErrLockLost)
}

// RetryAfterSeconds rounds d up to whole seconds, at least 1, for a
// Retry-After header.
func RetryAfterSeconds(d time.Duration) int64 {
	s := int64((d + time.Second - 1) / time.Second)
	if s < 1 {
		s = 1
	}
	return s
}

// DefaultRetryAfter is the retry delay suggested to a request that found its
// lock held, unless configured otherwise.
const DefaultRetryAfter = time.Second

// RetryHint is the retry delay suggested to a request that found its lock
// held: def, capped by the request's wait when it has one (a client retrying
// sooner than it was willing to wait gains nothing by waiting longer), and
// by the holder's remaining lease when that is shorter still. The holder's
// lease alone is no hint: under the watchdog it is renewed for as long as
// the holder runs, so it says nothing about when the lock frees.
func RetryHint(def, wait, remaining time.Duration) time.Duration {
	d := def
	if wait > 0 && wait < d {
		d = wait
	}
	if remaining > 0 && remaining < d {
		d = remaining
	}
	return d
}

// CheckLockPrefix reports whether prefix, as newLock names its locks (after a
// Client's own key prefix, which the middleware does not see), makes every
// lock name, or every integer key's, one that newLock refuses: another lock's
// companion key ("sc:" after a Client's "redisson_", "timeout:" and "42"
// after "orders:rwlock_"). Every request would be answered as if its key were
// bad. It blames the prefix only when newLock takes the same names without
// it: a factory that refuses every name says nothing of the prefix. newLock
// is called with names only; no lock is taken.
func CheckLockPrefix(newLock func(key string) (scriptlock.Locker, error), prefix string) error {
	for _, probe := range []string{"probe", "0"} {
		_, err := newLock(prefix + probe)
		if !errors.Is(err, scriptlock.ErrInvalidName) {
			continue
		}
		if _, bare := newLock(probe); !errors.Is(bare, scriptlock.ErrInvalidName) {
			return fmt.Errorf("key prefix %q makes lock names the lock refuses: %w", prefix, err)
		}
	}
	return nil
}
