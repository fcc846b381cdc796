package scriptlock

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Locker is the shape every exclusive primitive shares (Mutex, FairMutex,
// LeanMutex, RWMutex's read and write sides, MultiLock, RedLock), so
// middleware and MultiLock can take any of them.
//
// Lock and TryLock return a context derived from ctx that is cancelled, with
// cause ErrLockLost, when the lock is lost; it carries the owner id (so nested
// code re-enters, except a LeanMutex's, which refuses it with
// ErrNotReentrant) and the fencing token (see Fence; none from a RedLock, nor
// from a LeanMutex without WithFencing).
type Locker interface {
	// Name is the lock's name as given (before any prefix).
	Name() string
	// Lock waits until the lock is acquired or ctx ends.
	Lock(ctx context.Context) (context.Context, error)
	// TryLock waits at most wait (0: a single attempt) and then returns an
	// error that errors.Is ErrNotAcquired.
	TryLock(ctx context.Context, wait time.Duration) (context.Context, error)
	// Unlock releases one hold of the owner found in ctx. It does not depend on
	// ctx still being alive.
	Unlock(ctx context.Context) error
}

type ownerKey struct{}
type fenceKey struct{ name string }
type anyFenceKey struct{}

// WithOwner returns a context whose locks are held by owner id. Two calls with
// the same owner id on the same lock re-enter it (hold count) instead of
// blocking. Without an owner in the context, every Lock call is a new owner
// (and the context it returns carries that owner); WithOwner is for crossing
// API boundaries where that context cannot be passed along. The id is scoped
// to the Client that locks with it: another Client, in this process or
// another, naming the same id is a different owner, which neither re-enters
// nor releases the hold. A shared owner's releases name the hold's
// fencing token, so one that timed out and reaches Redis late cannot release
// the owner's next hold (a read hold names a mark written with it instead).
// An unfenced LeanMutex draws a token for a shared owner's hold for this,
// at the cost of a script for its acquisition. An empty
// owner id clears the owner ctx carries: the next Lock makes a fresh one.
// RWMutex refuses an owner id ending in ":write" (ErrInvalidArgument): its
// read hold would be the write hold of the owner without that ending.
func WithOwner(ctx context.Context, owner string) context.Context {
	return context.WithValue(ctx, ownerKey{}, owner)
}

// OwnerFrom returns the owner id in ctx: a lock context's, or WithOwner's.
// A nil ctx has none.
func OwnerFrom(ctx context.Context) (string, bool) {
	if ctx == nil {
		return "", false
	}
	o, ok := ctx.Value(ownerKey{}).(string)
	return o, ok && o != ""
}

// Fence returns the fencing token of the most recent lock acquired into ctx (the
// context Lock returned, or one derived from it). Tokens for one lock name are
// strictly increasing across acquisitions, so a downstream store can refuse a
// holder whose lease ran out: record the token on the row before reading it
// (UPDATE ... SET fence = $token WHERE ... AND fence < $token), then write only
// while it is still there (UPDATE ... WHERE ... AND fence = $token). A single
// "fence < $token" on the final write is not enough: a paused holder writing
// after the next holder read but before it wrote would pass it. ok is
// false when that lock hands out none (an unfenced LeanMutex, a read hold),
// even inside the context of a lock that does, and for a nil ctx.
func Fence(ctx context.Context) (int64, bool) {
	if ctx == nil {
		return 0, false
	}
	t, ok := ctx.Value(anyFenceKey{}).(int64)
	return t, ok
}

// FenceOf returns the fencing token of the lock named name held in ctx, for code
// holding several locks at once. A nil ctx has none.
func FenceOf(ctx context.Context, name string) (int64, bool) {
	if ctx == nil {
		return 0, false
	}
	t, ok := ctx.Value(fenceKey{name}).(int64)
	return t, ok
}

func withFence(ctx context.Context, name string, token int64) context.Context {
	return context.WithValue(context.WithValue(ctx, fenceKey{name}, token), anyFenceKey{}, token)
}

// lockCtx is the context a lock hands out: one allocation carries the owner
// and the fencing token on top of the cancellable context.
type lockCtx struct {
	context.Context // the cancellable context; with lazy, the caller's
	owner, name     string
	token           int64 // 0: none
	hold            *hold
	// lazy, set for every lock context the engine grants (a RedLock's and
	// a MultiLock's are made at Lock), makes the cancellable context only
	// when something asks for it (Done, context.Cause, a context derived
	// from this one):
	// most holds are released without it, and deriving one registers it
	// with the caller's context and cancels it again, about 0.4 µs per
	// Lock+Unlock, on a mutex the caller's goroutines share. Until then
	// Context is the caller's, and Err tells the hold's end from it.
	lazy *lazyCancel
}

type lockCtxKey struct{}

// lazyCancel is a lock context's cancellable context, made on first use.
type lazyCancel struct {
	mu     sync.Mutex      // serialises making inner and ending
	inner  context.Context // made; nil until then
	cancel context.CancelCauseFunc
	// err and cause: the hold ended (or the caller's context had) before
	// inner was made (ended), with these as inner would have reported them.
	err, cause error
	// made and ended are set once, after what they tell of, so that Done
	// and Err read without mu: a lock context's goroutines may poll them in
	// loops, and a mutex per call would make them contend.
	made, ended atomic.Bool
}

// Done makes the cancellable context if it was not made yet: one made after
// the hold ended is already cancelled, with the cause the hold ended with.
func (c *lockCtx) Done() <-chan struct{} {
	if c.lazy == nil {
		return c.Context.Done()
	}
	return c.made().Done()
}

// Err is the cancellable context's, without making it.
func (c *lockCtx) Err() error {
	if c.lazy == nil {
		return c.Context.Err()
	}
	z := c.lazy
	switch {
	case z.made.Load():
		return z.inner.Err()
	case z.ended.Load():
		return z.err
	}
	return c.Context.Err()
}

// made returns the cancellable context of a lazy lock context, making it.
func (c *lockCtx) made() context.Context {
	z := c.lazy
	if z.made.Load() {
		return z.inner
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.inner != nil {
		return z.inner
	}
	switch {
	case !z.ended.Load():
		z.inner, z.cancel = context.WithCancelCause(c.Context)
	case z.err == context.Canceled:
		// Ended with the hold: not with the caller's context, which may
		// have ended since.
		var cancel context.CancelCauseFunc
		z.inner, cancel = context.WithCancelCause(context.WithoutCancel(c.Context))
		cancel(z.cause)
	default:
		// Ended with the caller's context, which is done: so is this one,
		// with its error and cause.
		var cancel context.CancelCauseFunc
		z.inner, cancel = context.WithCancelCause(c.Context)
		cancel(z.cause)
	}
	z.made.Store(true)
	return z.inner
}

// end cancels a lazy lock context with cause (see hold.end), or records
// that it ended, for the context made later.
func (c *lockCtx) end(cause error) {
	z := c.lazy
	z.mu.Lock()
	if z.inner != nil {
		cancel := z.cancel
		z.mu.Unlock()
		cancel(cause)
		return
	}
	if !z.ended.Load() {
		if err := c.Context.Err(); err != nil {
			// The caller's context ended first: a context derived from it
			// would have ended with it.
			z.err, z.cause = err, context.Cause(c.Context)
		} else {
			z.err, z.cause = context.Canceled, cause
		}
		z.ended.Store(true)
	}
	z.mu.Unlock()
}

func (c *lockCtx) Value(key any) any {
	switch k := key.(type) {
	case lockCtxKey:
		return c
	case ownerKey:
		return c.owner
	case anyFenceKey:
		if c.token != 0 {
			return c.token
		}
		// A lock without a token (an unfenced LeanMutex, a read hold) is
		// still the most recent lock: an enclosing lock's token, drawn from
		// another counter, says nothing of this one's holders.
		return nil
	case fenceKey:
		if k.name == c.name {
			if c.token != 0 {
				return c.token
			}
			return nil
		}
	}
	if c.lazy != nil && key == cancelCtxKey {
		// The context package finds a cancellable context by this key, for
		// context.Cause and for the contexts derived from this one.
		return c.made().Value(key)
	}
	return c.Context.Value(key)
}

// cancelCtxKey is the key the context package looks a cancellable context up
// by. It is unexported, so it is read from what context.Cause asks of a
// context of ours rather than assumed: a caller's own key of the same type
// does not make a lazy lock context, and a Go release that changes the key
// changes it here too (TestLazyContextLossKinds fails if none is
// found).
var cancelCtxKey = func() any {
	var p keyProbe
	_ = context.Cause(&p)
	return p.key
}()

// keyProbe is an ended context that records the first key looked up in it.
type keyProbe struct{ key any }

func (*keyProbe) Deadline() (time.Time, bool) { return time.Time{}, false }
func (*keyProbe) Done() <-chan struct{}       { return nil }
func (*keyProbe) Err() error                  { return context.Canceled }

func (p *keyProbe) Value(key any) any {
	if p.key == nil {
		p.key = key
	}
	return nil
}
