package scriptlock

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// The lock context of every kind of lock (lazyKinds), first used from many
// goroutines at once (Done, a derived context, AfterFunc, Cause) while the
// hold ends (Unlock, or a ForceUnlock that loses it): one context is made, every Done is its channel
// and is closed, every derived context ends with the hold's cause, every
// AfterFunc runs once. Run with -race.
func TestLazyContextFirstUseConcurrent(t *testing.T) {
	t.Parallel()
	stress(t)
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 2*time.Minute)
	for _, k := range lazyKinds() {
		for _, how := range []string{"Unlock", "ForceUnlock"} {
			t.Run(k.name+"/"+how, func(t *testing.T) {
				l := k.open(t, c, "first-use-"+how)
				for range 30 {
					lctx, err := l.Lock(ctx)
					if err != nil {
						t.Fatal(err)
					}
					ctxLazy(t, lctx)
					const n = 16
					start := make(chan struct{})
					var wg sync.WaitGroup
					dones := make([]<-chan struct{}, n)
					kids := make([]context.Context, n)
					stops := make([]context.CancelFunc, n)
					var ran atomic.Int32
					for i := range n {
						wg.Go(func() {
							<-start
							switch i % 4 {
							case 0:
								dones[i] = lctx.Done()
							case 1:
								kids[i], stops[i] = context.WithCancel(lctx)
							case 2:
								context.AfterFunc(lctx, func() { ran.Add(1) })
							case 3:
								_, _ = lctx.Err(), context.Cause(lctx)
								kids[i], stops[i] = context.WithTimeout(lctx, time.Hour)
							}
						})
					}
					var endErr error
					wg.Go(func() {
						<-start
						if how == "Unlock" {
							endErr = l.Unlock(lctx)
						} else {
							_, endErr = l.ForceUnlock(ctx)
						}
					})
					close(start)
					wg.Wait()
					if endErr != nil {
						t.Fatalf("%s: %v", how, endErr)
					}
					want := error(context.Canceled)
					if how == "ForceUnlock" {
						want = ErrLockLost
					}
					done := lctx.Done()
					select {
					case <-done:
					default:
						t.Fatalf("lock context not done after %s", how)
					}
					if got := context.Cause(lctx); !errors.Is(got, want) || !errors.Is(lctx.Err(), context.Canceled) {
						t.Fatalf("Cause, Err = %v, %v; want %v, context.Canceled", got, lctx.Err(), want)
					}
					for i, d := range dones {
						if d != nil && d != done {
							t.Fatalf("goroutine %d's Done is another channel", i)
						}
					}
					for i, k := range kids {
						if k == nil {
							continue
						}
						select {
						case <-k.Done():
						default:
							t.Fatalf("derived context %d not done after %s", i, how)
						}
						if got := context.Cause(k); !errors.Is(got, want) {
							t.Fatalf("derived context %d: Cause = %v, want %v", i, got, want)
						}
						stops[i]()
					}
					if !eventually(5*time.Second, func() bool { return ran.Load() == n/4 }) {
						t.Fatalf("AfterFunc ran %d times, want %d", ran.Load(), n/4)
					}
				}
			})
		}
	}
}

// propagateGoroutines counts the goroutines the context package starts to
// carry a parent's end to a context derived from it, when it cannot find
// the parent's cancellable context.
func propagateGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "context.(*cancelCtx).propagateCancel.func")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// Contexts derived from the lazily made lock context of every kind of lock
// (lazyKinds), before and after the hold ends, are tied to it as to any
// cancellable context: no goroutine per derived context. Not parallel: the count is of every
// goroutine in the process.
func TestLazyContextDerivedWithoutGoroutine(t *testing.T) {
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	ctx := testCtx(t, 30*time.Second)
	for _, k := range lazyKinds() {
		t.Run(k.name, func(t *testing.T) {
			l := k.open(t, c, "derived")
			base := propagateGoroutines()
			lctx, err := l.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ctxLazy(t, lctx)
			type valKey struct{}
			derive := func() []context.Context {
				var kids []context.Context
				for range 20 {
					a, stopA := context.WithCancel(lctx)
					t.Cleanup(stopA)
					b, stopB := context.WithTimeout(lctx, time.Hour)
					t.Cleanup(stopB)
					v, stopV := context.WithCancel(context.WithValue(lctx, valKey{}, 1))
					t.Cleanup(stopV)
					stop := context.AfterFunc(lctx, func() {})
					t.Cleanup(func() { stop() })
					kids = append(kids, a, b, v)
				}
				return kids
			}
			kids := derive()
			if got := propagateGoroutines() - base; got > 0 {
				t.Fatalf("%d goroutines carry the lock context's end to %d contexts derived from it", got, len(kids))
			}
			if _, err := l.ForceUnlock(ctx); err != nil {
				t.Fatal(err)
			}
			kids = append(kids, derive()...)
			if got := propagateGoroutines() - base; got > 0 {
				t.Fatalf("after the loss, %d goroutines carry the lock context's end", got)
			}
			for i, k := range kids {
				if !errors.Is(context.Cause(k), ErrLockLost) {
					t.Fatalf("derived context %d: Cause = %v, want ErrLockLost", i, context.Cause(k))
				}
			}
		})
	}
}

// afterFuncParent is a caller's context that is not the context package's:
// a context derived from it registers with AfterFunc, and live counts the
// registrations not yet stopped.
type afterFuncParent struct {
	context.Context
	done chan struct{}
	live atomic.Int64
}

func (p *afterFuncParent) Done() <-chan struct{} { return p.done }

func (p *afterFuncParent) AfterFunc(func()) func() bool {
	p.live.Add(1)
	var once sync.Once
	return func() bool {
		stopped := false
		once.Do(func() { p.live.Add(-1); stopped = true })
		return stopped
	}
}

// The lock context of every kind of lock (lazyKinds), made lazily from
// Done, a derived context or AfterFunc, before or after the hold ends, leaves nothing behind once the
// hold ends: no registration with the caller's context (which may live for
// the whole process and lock many times) and no goroutine. Not parallel:
// goleak sees every goroutine in the process.
func TestLazyContextLeavesNothing(t *testing.T) {
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	parent := &afterFuncParent{Context: context.Background(), done: make(chan struct{})}
	for _, k := range lazyKinds() {
		t.Run(k.name, func(t *testing.T) {
			l := k.open(t, c, "leaves-nothing")
			uses := []func(lctx context.Context){
				func(context.Context) {},
				func(lctx context.Context) { <-lctx.Done() },
				func(lctx context.Context) { _ = context.Cause(lctx) },
				func(lctx context.Context) {
					_, stop := context.WithCancel(lctx)
					defer stop()
				},
				func(lctx context.Context) { context.AfterFunc(lctx, func() {}) },
			}
			cycle := func(release func(context.Context) error) {
				for i, use := range uses {
					for _, after := range []bool{false, true} {
						lctx, err := l.Lock(parent)
						if err != nil {
							t.Fatal(err)
						}
						if i > 0 && !after {
							if i == 1 {
								_ = lctx.Done() // made; <-Done would wait
							} else {
								use(lctx)
							}
						}
						if err := release(lctx); err != nil {
							t.Fatal(err)
						}
						if after {
							use(lctx)
						}
						if got := parent.live.Load(); got != 0 {
							t.Fatalf("use %d (after the end: %v): %d registrations left with the caller's context", i, after, got)
						}
					}
				}
			}
			unlock := func(lctx context.Context) error { return l.Unlock(lctx) }
			force := func(context.Context) error {
				_, err := l.ForceUnlock(context.Background())
				return err
			}
			cycle(unlock) // the Client's own goroutines started
			before := goleak.IgnoreCurrent()
			cycle(unlock)
			cycle(force)
			goleak.VerifyNone(t, before, redistest.IgnoreReaper(),
				goleak.IgnoreAnyFunction("github.com/redis/rueidis.(*pipe)._backgroundRead"),
				goleak.IgnoreAnyFunction("github.com/redis/rueidis.(*pipe)._backgroundWrite"))
		})
	}
}

// Done, Err and Cause of the lock context of every kind of lock
// (lazyKinds), once it is made (or once the hold ended, for Err), take no
// lock: the goroutines that share a
// lock context and poll it do not contend. Shown by holding the lock they
// would take.
func TestLazyContextReadsWithoutLock(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t))
	for _, k := range lazyKinds() {
		t.Run(k.name, func(t *testing.T) {
			l := k.open(t, c, "reads")
			ctx := testCtx(t, 20*time.Second)
			// waiting runs the reads with the lock context's lock held, and names
			// those that wait for it.
			waiting := func(z *lazyCancel, reads map[string]func()) []string {
				z.mu.Lock()
				defer z.mu.Unlock() // also lets the reads still waiting go
				var names []string
				for name, f := range reads {
					done := make(chan struct{})
					go func() {
						defer close(done)
						f()
					}()
					select {
					case <-done:
					case <-time.After(2 * time.Second):
						names = append(names, name)
					}
				}
				return names
			}
			for _, made := range []bool{true, false} {
				lctx, err := l.Lock(ctx)
				if err != nil {
					t.Fatal(err)
				}
				z := ctxLazy(t, lctx)
				reads := map[string]func(){"Err": func() { _ = lctx.Err() }}
				if made {
					_ = lctx.Done()
					reads["Done"] = func() { _ = lctx.Done() }
					reads["Cause"] = func() { _ = context.Cause(lctx) }
				}
				if w := waiting(z, reads); len(w) > 0 {
					t.Errorf("held, made %v: %v wait for the lock context's own lock", made, w)
				}
				if err := l.Unlock(lctx); err != nil {
					t.Fatal(err)
				}
				if w := waiting(z, reads); len(w) > 0 {
					t.Errorf("released, made %v: %v wait for the lock context's own lock", made, w)
				}
			}
		})
	}
}
