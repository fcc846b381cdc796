package scriptlock

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// sentThenPanicClient is a rueidis client wrapper (a hook, a middleware)
// that panics, or ends its goroutine, on the calls its test picks after
// the server answered them: the command ran, and its reply never reaches
// the caller.
type sentThenPanicClient struct {
	rueidis.Client
	*wrapperFault
}

func (p *sentThenPanicClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	// The words are read before the call: rueidis reuses them after it.
	call := wrapperCall{method: "Do", ctx: ctx, args: slices.Clone(cmd.Commands())}
	r := p.Client.Do(ctx, cmd)
	if err := r.Error(); err == nil || !strings.HasPrefix(err.Error(), "NOSCRIPT") {
		p.trip(call) // not an EVALSHA the server did not run
	}
	return r
}

// panicFirstReleaseEnd is an Observer whose first ReleaseEnd panics: after
// the release it reports was made and recorded.
type panicFirstReleaseEnd struct {
	NopObserver
	first atomic.Bool
}

func (o *panicFirstReleaseEnd) ReleaseEnd(context.Context, Op, ReleaseEvent) {
	if o.first.CompareAndSwap(false, true) {
		panic("observer panicked")
	}
}

// reentrantKind is a lock kind whose owner can hold it twice, for the
// tests of an Unlock again.
type reentrantKind struct {
	name   string
	lock   func(ctx context.Context) (context.Context, error)
	unlock func(ctx context.Context) error
	holds  func(ctx context.Context) (int64, error) // the owner's holds on the server
}

func unlockAgainKinds(t *testing.T, c *Client) []func() reentrantKind {
	return []func() reentrantKind{
		func() reentrantKind {
			m := mustMutex(t, c, "m")
			return reentrantKind{"Mutex", func(ctx context.Context) (context.Context, error) { return m.Lock(ctx) }, m.Unlock,
				func(ctx context.Context) (int64, error) { st, err := m.State(ctx); return st.HoldCount, err }}
		},
		func() reentrantKind {
			f := mustFair(t, c, "f")
			return reentrantKind{"FairMutex", func(ctx context.Context) (context.Context, error) { return f.Lock(ctx) }, f.Unlock,
				func(ctx context.Context) (int64, error) { st, err := f.State(ctx); return st.HoldCount, err }}
		},
		func() reentrantKind {
			rw := mustRW(t, c, "w")
			return reentrantKind{"RWMutex write", func(ctx context.Context) (context.Context, error) { return rw.Lock(ctx) }, rw.Unlock,
				func(ctx context.Context) (int64, error) { st, err := rw.State(ctx); return st.Writes, err }}
		},
		func() reentrantKind {
			rw := mustRW(t, c, "r")
			return reentrantKind{"RWMutex read", func(ctx context.Context) (context.Context, error) { return rw.RLock(ctx) }, rw.RUnlock,
				func(ctx context.Context) (int64, error) { st, err := rw.State(ctx); return st.Reads, err }}
		},
	}
}

// TestUnlockAgainAfterReleaseSentPanic: an Unlock whose client wrapper
// panicked, or ended its goroutine, after the release of one of the
// owner's two holds ran on the server (its reply never reached the Client)
// left the hold counted; an Unlock again with the same lock context sent a
// second release, which gave up the owner's other hold (the outer Lock's,
// whose context then ended as lost) and answered nil. It now answers
// ErrNotHeld and the other hold stays, for every re-entrant kind.
func TestUnlockAgainAfterReleaseSentPanic(t *testing.T) {
	t.Parallel()
	for _, goexit := range []bool{false, true} {
		node := redistest.Server(t)
		rc := &sentThenPanicClient{Client: node.Client(t), wrapperFault: &wrapperFault{on: scriptsThrough("Do")}}
		rc.goexit.Store(goexit)
		c := newTestClient(t, rc)
		want := endedPanicked
		if goexit {
			want = endedGoexit
		}
		for _, mk := range unlockAgainKinds(t, c) {
			k := mk()
			t.Run(k.name+" "+want, func(t *testing.T) {
				ctx := testCtx(t, 20*time.Second)
				octx := WithOwner(ctx, "owner-"+k.name)
				outer, err := k.lock(octx)
				if err != nil {
					t.Fatal(err)
				}
				inner, err := k.lock(outer)
				if err != nil {
					t.Fatal(err)
				}
				rc.left.Store(1) // the release's script call
				if how := howEnded(func() { err = k.unlock(inner) }); how != want {
					t.Fatalf("Unlock whose wrapper %s after the release %s (%v)", want, how, err)
				}
				if n, err := k.holds(octx); err != nil || n != 1 {
					t.Fatalf("owner's holds after the Unlock: %d, %v; want 1 (the release ran)", n, err)
				}
				if err := k.unlock(inner); !errors.Is(err, ErrNotHeld) {
					t.Errorf("Unlock again: %v; want ErrNotHeld (its release ran)", err)
				}
				if n, err := k.holds(octx); err != nil || n != 1 {
					t.Errorf("owner's holds after Unlock again: %d, %v; want the outer hold kept", n, err)
				}
				if err := context.Cause(outer); err != nil {
					t.Fatalf("outer hold ended: %v", err)
				}
				if err := k.unlock(outer); err != nil {
					t.Fatalf("outer Unlock: %v", err)
				}
				if n, err := k.holds(octx); err != nil || n != 0 {
					t.Fatalf("owner's holds after the outer Unlock: %d, %v", n, err)
				}
			})
		}
	}
}

// TestUnlockOuterAfterReleaseSentPanic: the outer hold's Unlock after an
// Unlock of the inner one whose wrapper panicked once its release ran
// frees the lock; it ended the outer context as lost ("the release left no
// lease on the server"), the inner hold still counted. It ends it as
// released, and an Unlock again of the inner hold answers ErrNotHeld.
func TestUnlockOuterAfterReleaseSentPanic(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := &sentThenPanicClient{Client: node.Client(t), wrapperFault: &wrapperFault{on: scriptsThrough("Do")}}
	c := newTestClient(t, rc)
	for _, mk := range unlockAgainKinds(t, c) {
		k := mk()
		t.Run(k.name, func(t *testing.T) {
			ctx := testCtx(t, 20*time.Second)
			octx := WithOwner(ctx, "owner-"+k.name)
			outer, err := k.lock(octx)
			if err != nil {
				t.Fatal(err)
			}
			inner, err := k.lock(outer)
			if err != nil {
				t.Fatal(err)
			}
			rc.left.Store(1)
			if p := panicked(func() { err = k.unlock(inner) }); p == nil {
				t.Fatalf("Unlock did not pass the wrapper's panic on (%v)", err)
			}
			if err := k.unlock(outer); err != nil {
				t.Fatalf("outer Unlock: %v", err)
			}
			if err := context.Cause(outer); err != context.Canceled {
				t.Errorf("outer context after its Unlock: %v; want context.Canceled (released, not lost)", err)
			}
			if n, err := k.holds(octx); err != nil || n != 0 {
				t.Errorf("owner's holds after the outer Unlock: %d, %v", n, err)
			}
			if err := k.unlock(inner); !errors.Is(err, ErrNotHeld) {
				t.Errorf("Unlock again of the inner hold: %v; want ErrNotHeld", err)
			}
		})
	}
}

// TestUnlockAgainAfterReleaseUnsent: an Unlock whose client wrapper
// panicked, or ended its goroutine, before its release was sent is
// settled by an Unlock again with the same lock context: the hold it
// named is given back (nil), the owner's other hold stays.
func TestUnlockAgainAfterReleaseUnsent(t *testing.T) {
	t.Parallel()
	for _, goexit := range []bool{false, true} {
		node := redistest.Server(t)
		rc := newPanickyClient(node.Client(t), scriptsThrough("Do"))
		rc.goexit.Store(goexit)
		c := newTestClient(t, rc)
		want := endedPanicked
		if goexit {
			want = endedGoexit
		}
		for _, mk := range unlockAgainKinds(t, c) {
			k := mk()
			t.Run(k.name+" "+want, func(t *testing.T) {
				ctx := testCtx(t, 20*time.Second)
				octx := WithOwner(ctx, "owner-"+k.name)
				outer, err := k.lock(octx)
				if err != nil {
					t.Fatal(err)
				}
				inner, err := k.lock(outer)
				if err != nil {
					t.Fatal(err)
				}
				rc.left.Store(1)
				if how := howEnded(func() { err = k.unlock(inner) }); how != want {
					t.Fatalf("Unlock whose wrapper %s before the release %s (%v)", want, how, err)
				}
				if n, err := k.holds(octx); err != nil || n != 2 {
					t.Fatalf("owner's holds after the Unlock: %d, %v; want 2 (nothing sent)", n, err)
				}
				if err := k.unlock(inner); err != nil {
					t.Errorf("Unlock again: %v; want the hold given back", err)
				}
				if n, err := k.holds(octx); err != nil || n != 1 {
					t.Errorf("owner's holds after Unlock again: %d, %v; want the outer hold alone", n, err)
				}
				if err := context.Cause(outer); err != nil {
					t.Fatalf("outer hold ended: %v", err)
				}
				if err := context.Cause(inner); !errors.Is(err, context.Canceled) {
					t.Errorf("inner context after Unlock again: %v; want ended as given back", err)
				}
				if err := k.unlock(outer); err != nil {
					t.Fatalf("outer Unlock: %v", err)
				}
				if n, err := k.holds(octx); err != nil || n != 0 {
					t.Fatalf("owner's holds after the outer Unlock: %d, %v", n, err)
				}
			})
		}
	}
}

// TestUnlockAgainAfterObserverPanic: an Unlock whose Observer's
// ReleaseStart or ReleaseEnd panicked, or ended its goroutine, after the
// release was made and recorded; an Unlock again with the same lock
// context gave up the owner's other hold (the outer Lock's) and answered
// nil. It answers ErrNotHeld and the other hold stays; so does an Unlock
// again after one that returned.
func TestUnlockAgainAfterObserverPanic(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		obs  func() Observer
		want string
	}{
		{"ReleaseStart panics", func() Observer { return &panicFirstRelease{} }, endedPanicked},
		{"ReleaseEnd panics", func() Observer { return &panicFirstReleaseEnd{} }, endedPanicked},
		{"ReleaseEnd ends its goroutine", func() Observer { return &goexitFirstReleaseEnd{} }, endedGoexit},
		{"no Observer", func() Observer { return nil }, endedReturned},
	} {
		node := redistest.Server(t)
		probe := newTestClient(t, node.Client(t))
		for i, mk := range unlockAgainKinds(t, probe) {
			name := mk().name
			t.Run(name+" "+tc.name, func(t *testing.T) {
				t.Parallel()
				obs := tc.obs()
				var opts []Option
				if obs != nil {
					opts = append(opts, WithObserver(obs))
				}
				c := newTestClient(t, node.Client(t), opts...)
				k := unlockAgainKinds(t, c)[i]()
				ctx := testCtx(t, 20*time.Second)
				octx := WithOwner(ctx, "owner-1")
				outer, err := k.lock(octx)
				if err != nil {
					t.Fatal(err)
				}
				inner, err := k.lock(outer)
				if err != nil {
					t.Fatal(err)
				}
				if how := howEnded(func() { err = k.unlock(inner) }); how != tc.want {
					t.Fatalf("Unlock %s (%v); want %s", how, err, tc.want)
				}
				if err := k.unlock(inner); !errors.Is(err, ErrNotHeld) {
					t.Errorf("Unlock again: %v; want ErrNotHeld (its release went through)", err)
				}
				if n, err := k.holds(octx); err != nil || n != 1 {
					t.Errorf("owner's holds after Unlock again: %d, %v; want the outer hold kept", n, err)
				}
				if err := context.Cause(outer); err != nil {
					t.Fatalf("outer hold ended: %v", err)
				}
				if err := k.unlock(outer); err != nil {
					t.Fatalf("outer Unlock: %v", err)
				}
			})
		}
	}
}
