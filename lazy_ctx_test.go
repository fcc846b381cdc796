package scriptlock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// lazyLock is what the tests of a lazily made lock context ask of a lock.
type lazyLock interface {
	Locker
	LockWithLease(ctx context.Context, lease time.Duration) (context.Context, error)
	ForceUnlock(ctx context.Context) (bool, error)
	Key() string
}

// rwReadLock is an RWMutex's read side as a lazyLock.
type rwReadLock struct{ *RWMutex }

func (r rwReadLock) Lock(ctx context.Context) (context.Context, error) { return r.RLock(ctx) }
func (r rwReadLock) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	return r.TryRLock(ctx, wait)
}
func (r rwReadLock) LockWithLease(ctx context.Context, lease time.Duration) (context.Context, error) {
	return r.RLockWithLease(ctx, lease)
}
func (r rwReadLock) Unlock(ctx context.Context) error { return r.RUnlock(ctx) }

// lazyKind is a kind of lock whose lock context is made lazily.
type lazyKind struct {
	name, slug string
	make       func(t testing.TB, c *Client, name string) lazyLock
}

// open is a handle of the kind on the lock name, which the kind's slug
// makes its own: kinds share no lock.
func (k lazyKind) open(t testing.TB, c *Client, name string) lazyLock {
	t.Helper()
	return k.make(t, c, k.slug+"-"+name)
}

// lazyKinds are every kind of lock whose Lock makes its lock context
// lazily: all that the engine grants.
func lazyKinds() []lazyKind {
	return []lazyKind{
		{"Mutex", "mutex", func(t testing.TB, c *Client, name string) lazyLock { return mustMutex(t, c, name) }},
		{"FairMutex", "fair", func(t testing.TB, c *Client, name string) lazyLock { return mustFair(t, c, name) }},
		{"LeanMutex", "lean", func(t testing.TB, c *Client, name string) lazyLock { return mustLean(t, c, name) }},
		{"RWMutex", "rw", func(t testing.TB, c *Client, name string) lazyLock { return mustRW(t, c, name) }},
		{"RWMutex read", "rwread", func(t testing.TB, c *Client, name string) lazyLock { return rwReadLock{mustRW(t, c, name)} }},
	}
}

// ctxLazy is the lazy state of a lock context, failing the test when the
// context has none.
func ctxLazy(t *testing.T, lctx context.Context) *lazyCancel {
	t.Helper()
	lc, _ := lctx.(*lockCtx)
	if lc == nil || lc.lazy == nil {
		t.Fatalf("the lock context %T is not made lazily", lctx)
	}
	return lc.lazy
}

// isMade reports whether the lazy context's cancellable context was made.
func (z *lazyCancel) isMade() bool {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.inner != nil
}

// The lock context of every kind of lock (lazyKinds) makes its cancellable
// context only when asked for one, and still keeps every promise of the
// context Lock returns: it ends at the loss deadline, with ErrLockLost, whether it was made before
// or after; one made after the hold ended comes back already ended, with
// the cause it ended with, also when the caller's context has ended since;
// and it ends with the caller's context and with Unlock.
func TestLazyContext(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	const lease = 500 * time.Millisecond
	// The context must end by the lease, counted from the request; a timer
	// on a loaded machine may fire late, hence the margin.
	const bound = lease + time.Second
	for _, k := range lazyKinds() {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()

			t.Run("made after the loss", func(t *testing.T) {
				l := k.open(t, c, "lazy-after")
				ctx, cancel := context.WithCancelCause(testCtx(t, 20*time.Second))
				defer cancel(nil)
				sent := time.Now()
				lctx, err := l.LockWithLease(ctx, lease)
				if err != nil {
					t.Fatal(err)
				}
				z := ctxLazy(t, lctx)
				// Err tells the end without making the context.
				for lctx.Err() == nil {
					if time.Since(sent) > bound+5*time.Second {
						t.Fatal("the lock context never ended")
					}
					time.Sleep(5 * time.Millisecond)
				}
				if d := time.Since(sent); d > bound {
					t.Fatalf("lock context ended %s after the request, lease %s", d.Round(time.Millisecond), lease)
				}
				if z.isMade() {
					t.Fatal("Err made the cancellable context")
				}
				if !errors.Is(lctx.Err(), context.Canceled) {
					t.Fatalf("Err = %v, want context.Canceled", lctx.Err())
				}
				// The caller's context ends after the hold did: the lock context
				// still ended with the loss.
				cancel(errors.New("the caller's own end"))
				select {
				case <-lctx.Done():
				default:
					t.Fatal("a lock context made after its hold was lost is not done")
				}
				if !errors.Is(context.Cause(lctx), ErrLockLost) || !errors.Is(lctx.Err(), context.Canceled) {
					t.Fatalf("Cause, Err = %v, %v; want ErrLockLost, context.Canceled", context.Cause(lctx), lctx.Err())
				}
				// So are the contexts derived from it.
				child, stop := context.WithCancel(lctx)
				defer stop()
				if !errors.Is(context.Cause(child), ErrLockLost) {
					t.Fatalf("derived context's cause = %v, want ErrLockLost", context.Cause(child))
				}
			})

			t.Run("made before the loss", func(t *testing.T) {
				l := k.open(t, c, "lazy-before")
				ctx := testCtx(t, 20*time.Second)
				sent := time.Now()
				lctx, err := l.LockWithLease(ctx, lease)
				if err != nil {
					t.Fatal(err)
				}
				ctxLazy(t, lctx)
				// Derived in the three ways a caller would: each must end at the
				// loss deadline.
				child, stop := context.WithCancel(lctx)
				defer stop()
				var wg sync.WaitGroup
				ended := make(chan time.Time, 3)
				for _, done := range []<-chan struct{}{lctx.Done(), child.Done()} {
					wg.Go(func() {
						<-done
						ended <- time.Now()
					})
				}
				context.AfterFunc(lctx, func() { ended <- time.Now() })
				for range 3 {
					select {
					case at := <-ended:
						if d := at.Sub(sent); d > bound {
							t.Fatalf("lock context ended %s after the request, lease %s", d.Round(time.Millisecond), lease)
						}
					case <-time.After(bound + 5*time.Second):
						t.Fatal("the lock context never ended")
					}
				}
				wg.Wait()
				if !errors.Is(context.Cause(lctx), ErrLockLost) || !errors.Is(context.Cause(child), ErrLockLost) {
					t.Fatalf("causes %v, %v; want ErrLockLost", context.Cause(lctx), context.Cause(child))
				}
			})

			t.Run("the caller's context ends", func(t *testing.T) {
				l := k.open(t, c, "lazy-caller")
				ctx, cancel := context.WithCancelCause(testCtx(t, 20*time.Second))
				lctx, err := l.Lock(ctx)
				if err != nil {
					t.Fatal(err)
				}
				z := ctxLazy(t, lctx)
				why := errors.New("the request ended")
				cancel(why)
				if !errors.Is(lctx.Err(), context.Canceled) || z.isMade() {
					t.Fatalf("Err = %v (made: %v), want context.Canceled unmade", lctx.Err(), z.isMade())
				}
				// Released after: the context still tells the caller's end.
				if err := l.Unlock(lctx); err != nil {
					t.Fatalf("Unlock: %v", err)
				}
				if exists(t, node, l.Key()) {
					t.Fatal("Unlock left the key")
				}
				<-lctx.Done()
				if got := context.Cause(lctx); got != why {
					t.Fatalf("Cause = %v, want the caller's %v", got, why)
				}
			})

			t.Run("deadline", func(t *testing.T) {
				l := k.open(t, c, "lazy-deadline")
				ctx, cancel := context.WithTimeout(testCtx(t, 20*time.Second), 300*time.Millisecond)
				defer cancel()
				lctx, err := l.Lock(ctx)
				if err != nil {
					t.Fatal(err)
				}
				dl, ok := lctx.Deadline()
				if want, _ := ctx.Deadline(); !ok || !dl.Equal(want) {
					t.Fatalf("Deadline = %v, %v; want the caller's %v", dl, ok, want)
				}
				<-ctx.Done()
				if !errors.Is(lctx.Err(), context.DeadlineExceeded) {
					t.Fatalf("Err = %v, want context.DeadlineExceeded", lctx.Err())
				}
				if err := l.Unlock(lctx); err != nil {
					t.Fatalf("Unlock: %v", err)
				}
				<-lctx.Done()
				if !errors.Is(lctx.Err(), context.DeadlineExceeded) {
					t.Fatalf("after Unlock, Err = %v, want context.DeadlineExceeded", lctx.Err())
				}
			})

			t.Run("Unlock", func(t *testing.T) {
				l := k.open(t, c, "lazy-unlock")
				ctx := testCtx(t, 20*time.Second)
				lctx, err := l.Lock(ctx)
				if err != nil {
					t.Fatal(err)
				}
				z := ctxLazy(t, lctx)
				if lctx.Err() != nil {
					t.Fatalf("held lock context: Err = %v", lctx.Err())
				}
				if err := l.Unlock(lctx); err != nil {
					t.Fatalf("Unlock: %v", err)
				}
				if !errors.Is(lctx.Err(), context.Canceled) || z.isMade() {
					t.Fatalf("after Unlock, Err = %v (made: %v), want context.Canceled unmade", lctx.Err(), z.isMade())
				}
				select {
				case <-lctx.Done():
				default:
					t.Fatal("a released hold's lock context, made after, is not done")
				}
				if got := context.Cause(lctx); got != context.Canceled {
					t.Fatalf("Cause = %v, want context.Canceled", got)
				}
			})
		})
	}
}

// A value the caller keeps under a key of its own of type *int (as the
// context package keeps its own) is looked up in the caller's context
// without making a lock context: only the context package's key makes it.
func TestLazyContextOwnIntKey(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	for _, k := range lazyKinds() {
		t.Run(k.name, func(t *testing.T) {
			l := k.open(t, c, "int-key")
			var key int
			lctx, err := l.Lock(context.WithValue(testCtx(t, 20*time.Second), &key, "mine"))
			if err != nil {
				t.Fatal(err)
			}
			z := ctxLazy(t, lctx)
			if got := lctx.Value(&key); got != "mine" {
				t.Fatalf("Value(&key) = %v, want the caller's %q", got, "mine")
			}
			if z.isMade() {
				t.Fatal("a lookup under the caller's own *int key made the lock context")
			}
			if err := l.Unlock(lctx); err != nil {
				t.Fatal(err)
			}
			if got := lctx.Value(&key); got != "mine" || z.isMade() {
				t.Fatalf("after Unlock: Value(&key) = %v (made: %v), want the caller's %q unmade", got, z.isMade(), "mine")
			}
		})
	}
}

// Close ends the lock contexts of the holds it ends with ErrClosed, made
// before or only after, and the contexts derived from them, as it does a
// lock context made at Lock (the Client's eagerLockCtx).
func TestLazyContextClose(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	for _, k := range lazyKinds() {
		t.Run(k.name, func(t *testing.T) {
			for _, eager := range []bool{false, true} {
				c := newTestClient(t, node.Client(t))
				c.eagerLockCtx = eager
				ctx := testCtx(t, 20*time.Second)
				before, err := k.open(t, c, fmt.Sprintf("close-before-%v", eager)).Lock(ctx)
				if err != nil {
					t.Fatal(err)
				}
				after, err := k.open(t, c, fmt.Sprintf("close-after-%v", eager)).Lock(ctx)
				if err != nil {
					t.Fatal(err)
				}
				var z *lazyCancel
				if !eager {
					ctxLazy(t, before)
					z = ctxLazy(t, after)
				}
				kid, stop := context.WithCancel(before)
				defer stop()
				if err := c.Close(); err != nil {
					t.Fatal(err)
				}
				if !errors.Is(after.Err(), context.Canceled) {
					t.Fatalf("eager %v: after Close, Err = %v, want context.Canceled", eager, after.Err())
				}
				if z != nil && z.isMade() {
					t.Fatal("Err made the context")
				}
				later, stopLater := context.WithCancel(after)
				defer stopLater()
				for i, lctx := range []context.Context{before, after, kid, later} {
					select {
					case <-lctx.Done():
					default:
						t.Fatalf("eager %v: context %d not done after Close", eager, i)
					}
					if got := context.Cause(lctx); got != ErrClosed || !errors.Is(lctx.Err(), context.Canceled) {
						t.Fatalf("eager %v: context %d: Cause, Err = %v, %v; want ErrClosed, context.Canceled", eager, i, got, lctx.Err())
					}
				}
			}
		})
	}
}
