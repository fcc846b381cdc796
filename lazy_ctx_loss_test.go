package scriptlock

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

type lossValKey struct{}

// The lock context of every kind of lock (lazyKinds), made lazily, ends
// with ErrLockLost however the hold is lost (its lease runs out, another
// client deletes the key and the watchdog finds it gone, the server goes
// away and the watchdog can no longer renew), whether it was made (Done, a
// derived context, AfterFunc) before the loss or only after: one made after
// is done at once, as are the contexts derived from it then, and AfterFunc
// runs.
func TestLazyContextLossKinds(t *testing.T) {
	t.Parallel()
	const (
		watchLease = 600 * time.Millisecond
		lease      = 500 * time.Millisecond
	)
	kinds := []struct {
		name string
		hold func(ctx context.Context, l lazyLock) (context.Context, error)
		lose func(t *testing.T, node *redistest.Node, l lazyLock)
	}{
		{"lease expired", func(ctx context.Context, l lazyLock) (context.Context, error) {
			return l.LockWithLease(ctx, lease)
		}, func(*testing.T, *redistest.Node, lazyLock) {}},
		{"key deleted by another", func(ctx context.Context, l lazyLock) (context.Context, error) {
			return l.Lock(ctx)
		}, func(t *testing.T, node *redistest.Node, l lazyLock) {
			if err := node.Do(t, "DEL", l.Key()).Error(); err != nil {
				t.Fatal(err)
			}
		}},
		{"server gone", func(ctx context.Context, l lazyLock) (context.Context, error) {
			return l.Lock(ctx)
		}, func(_ *testing.T, node *redistest.Node, _ lazyLock) { node.Kill() }},
	}
	for _, lk := range lazyKinds() {
		for _, k := range kinds {
			for _, before := range []bool{true, false} {
				name := lk.name + "/" + k.name + "/made after"
				if before {
					name = lk.name + "/" + k.name + "/made before"
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					node := redistest.Server(t)
					c := newTestClient(t, node.Client(t), WithWatchdog(watchLease, 200*time.Millisecond))
					l := lk.open(t, c, "lost")
					lctx, err := k.hold(testCtx(t, 30*time.Second), l)
					if err != nil {
						t.Fatal(err)
					}
					z := ctxLazy(t, lctx)
					var ran atomic.Int32
					var kids []context.Context
					derive := func() {
						a, stopA := context.WithCancel(lctx)
						t.Cleanup(stopA)
						b, stopB := context.WithTimeout(lctx, time.Hour)
						t.Cleanup(stopB)
						v, stopV := context.WithCancelCause(context.WithValue(lctx, lossValKey{}, "x"))
						t.Cleanup(func() { stopV(nil) })
						kids = append(kids, a, b, v)
						context.AfterFunc(lctx, func() { ran.Add(1) })
					}
					var done <-chan struct{}
					if before {
						done = lctx.Done()
						derive()
					}
					if lctx.Err() != nil {
						t.Fatalf("held lock context ended: %v", lctx.Err())
					}
					k.lose(t, node, l)
					// Err tells the end without making the context.
					if !eventually(10*time.Second, func() bool { return lctx.Err() != nil }) {
						t.Fatal("the lock context never ended")
					}
					if !before {
						if z.isMade() {
							t.Fatal("Err made the context")
						}
						done = lctx.Done()
						derive()
					}
					select {
					case <-done:
					case <-time.After(5 * time.Second):
						t.Fatal("Done not closed after Err reported the end")
					}
					if !errors.Is(lctx.Err(), context.Canceled) {
						t.Fatalf("Err = %v, want context.Canceled", lctx.Err())
					}
					if got := context.Cause(lctx); !errors.Is(got, ErrLockLost) {
						t.Fatalf("Cause = %v, want ErrLockLost", got)
					}
					for i, kid := range kids {
						select {
						case <-kid.Done():
						case <-time.After(5 * time.Second):
							t.Fatalf("derived context %d not done", i)
						}
						if got := context.Cause(kid); !errors.Is(got, ErrLockLost) {
							t.Fatalf("derived context %d: Cause = %v, want ErrLockLost", i, got)
						}
					}
					if !eventually(5*time.Second, func() bool { return ran.Load() == 1 }) {
						t.Fatalf("AfterFunc ran %d times, want 1", ran.Load())
					}
					// WithoutCancel keeps the values, not the end.
					wc := context.WithoutCancel(lctx)
					if wc.Err() != nil || context.Cause(wc) != nil || wc.Done() != nil || ownerIn(wc) != ownerIn(lctx) {
						t.Fatalf("WithoutCancel: Err %v, Cause %v, owner %q", wc.Err(), context.Cause(wc), ownerIn(wc))
					}
				})
			}
		}
	}
}
