package scriptlock

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// pairing is an Observer that checks that every AcquireStart has exactly one
// AcquireEnd and every ReleaseStart one ReleaseEnd, and that nothing is
// reported once the Client's Close has returned.
type pairing struct {
	mu       sync.Mutex
	next     int
	open     map[int]string // calls started and not ended
	problems []string
	closed   bool // Close returned
	// onAcquireEnd and onReleaseStart, when set, run in those events.
	onAcquireEnd   func(AcquireEvent)
	onReleaseStart func()
}

type pairKey struct{}

func newPairing() *pairing { return &pairing{open: map[int]string{}} }

func (p *pairing) event(what string) {
	if p.closed {
		p.problems = append(p.problems, what+" after Close returned")
	}
}

func (p *pairing) start(ctx context.Context, what string, op Op) context.Context {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.event(what + "Start " + op.Name)
	p.next++
	p.open[p.next] = what + " " + op.Name
	return context.WithValue(ctx, pairKey{}, p.next)
}

func (p *pairing) end(ctx context.Context, what string, op Op) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.event(what + "End " + op.Name)
	id, _ := ctx.Value(pairKey{}).(int)
	if _, ok := p.open[id]; !ok {
		p.problems = append(p.problems, fmt.Sprintf("%sEnd %s without its start (or twice)", what, op.Name))
		return
	}
	delete(p.open, id)
}

func (p *pairing) AcquireStart(ctx context.Context, op Op) context.Context {
	return p.start(ctx, "Acquire", op)
}

func (p *pairing) AcquireEnd(ctx context.Context, op Op, e AcquireEvent) {
	p.end(ctx, "Acquire", op)
	if f := p.onAcquireEnd; f != nil {
		f(e)
	}
}

func (p *pairing) ReleaseStart(ctx context.Context, op Op) context.Context {
	ctx = p.start(ctx, "Release", op)
	if f := p.onReleaseStart; f != nil {
		f()
	}
	return ctx
}

func (p *pairing) ReleaseEnd(ctx context.Context, op Op, _ ReleaseEvent) {
	p.end(ctx, "Release", op)
}

func (p *pairing) HoldEnd(_ context.Context, op Op, _ HoldEvent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.event("HoldEnd " + op.Name)
}

func (p *pairing) Renewal(RenewalEvent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.event("Renewal")
}

func (p *pairing) Guard(GuardEvent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.event("Guard")
}

// closeAndCheck closes c, then, once settle has returned, reports every
// call left unpaired and every event after Close.
func (p *pairing) closeAndCheck(t *testing.T, c *Client, settle func()) {
	t.Helper()
	c.Close()
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	if settle != nil {
		settle()
	}
	time.Sleep(50 * time.Millisecond)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, what := range p.open {
		t.Errorf("%s: started, never ended", what)
	}
	for _, s := range p.problems {
		t.Error(s)
	}
}

// Every acquisition and release an Observer sees starts and ends exactly
// once, whatever ends it, and nothing is reported after Close returns.
func TestObserverPairing(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	other := newTestClient(t, node.Client(t), prefix)
	cases := []struct {
		name string
		run  func(t *testing.T, c *Client, p *pairing, ctx context.Context) (settle func())
	}{
		{"success", func(t *testing.T, c *Client, p *pairing, ctx context.Context) func() {
			m := mustMutex(t, c, "ok")
			lctx, err := m.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Unlock(lctx); err != nil {
				t.Fatal(err)
			}
			s := mustSem(t, c, "sem")
			if _, err := s.TrySetPermits(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if err := s.TryAcquire(ctx, 1, 0); err != nil {
				t.Fatal(err)
			}
			if err := s.Release(ctx, 1); err != nil {
				t.Fatal(err)
			}
			return nil
		}},
		{"refused and context end", func(t *testing.T, c *Client, p *pairing, ctx context.Context) func() {
			if _, err := mustMutex(t, other, "held").Lock(ctx); err != nil {
				t.Fatal(err)
			}
			m := mustMutex(t, c, "held")
			if _, err := m.TryLock(ctx, 0); err == nil {
				t.Fatal("TryLock of a held lock succeeded")
			}
			short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			defer cancel()
			if _, err := m.Lock(short); err == nil {
				t.Fatal("Lock of a held lock succeeded")
			}
			return nil
		}},
		{"redis error", func(t *testing.T, c *Client, p *pairing, ctx context.Context) func() {
			node.Do(t, "SET", c.cfg.prefix+"str", "x")
			if _, err := mustMutex(t, c, "str").Lock(ctx); err == nil {
				t.Fatal("Lock of a string key succeeded")
			}
			return nil
		}},
		{"timeout with undo", func(t *testing.T, c *Client, p *pairing, ctx context.Context) func() {
			pauseServer(t, ctx, node, 300*time.Millisecond)
			short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
			if _, err := mustMutex(t, c, "slow").Lock(short); err == nil {
				t.Fatal("Lock during a pause succeeded")
			}
			return nil
		}},
		{"observer panic", func(t *testing.T, c *Client, p *pairing, ctx context.Context) func() {
			p.onAcquireEnd = func(e AcquireEvent) {
				if e.Outcome == Acquired {
					panic("AcquireEnd")
				}
			}
			if panicked(func() { _, _ = mustMutex(t, c, "bomb").Lock(ctx) }) == nil {
				t.Fatal("no panic")
			}
			return nil
		}},
		{"caller's context panics", func(t *testing.T, c *Client, p *pairing, ctx context.Context) func() {
			if panicked(func() { _, _ = mustMutex(t, c, "ctxpanic").Lock(panickyCtx{ctx}) }) == nil {
				t.Fatal("no panic")
			}
			return nil
		}},
		{"close during a wait", func(t *testing.T, c *Client, p *pairing, ctx context.Context) func() {
			if _, err := mustMutex(t, other, "wait").Lock(ctx); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := mustMutex(t, c, "wait").Lock(ctx)
				done <- err
			}()
			time.Sleep(100 * time.Millisecond)
			return func() { <-done }
		}},
		{"close during semaphore waits", func(t *testing.T, c *Client, p *pairing, ctx context.Context) func() {
			done := make(chan error, 2)
			go func() { done <- mustSem(t, c, "empty").Acquire(ctx, 1) }()
			go func() {
				_, err := mustPermits(t, c, "none").Acquire(ctx, time.Second)
				done <- err
			}()
			time.Sleep(100 * time.Millisecond)
			return func() { <-done; <-done }
		}},
		{"close during a redlock wait", func(t *testing.T, c *Client, p *pairing, ctx context.Context) func() {
			cs := []*Client{c}
			for i := range 2 {
				// A server of its own: a RedLock refuses nodes on one server.
				o, err := New(redistest.Server(t).Client(t), WithKeyPrefix(fmt.Sprintf("%s%d:", redistest.Prefix(t), i)))
				if err != nil {
					t.Fatal(err)
				}
				defer o.Close()
				cs = append(cs, o)
			}
			if _, err := mustRedLock(t, "redwait", cs).Lock(ctx); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := mustRedLock(t, "redwait", cs).Lock(ctx)
				done <- err
			}()
			time.Sleep(150 * time.Millisecond)
			return func() { <-done }
		}},
		{"close as a grant is reported", func(t *testing.T, c *Client, p *pairing, ctx context.Context) func() {
			closed := make(chan struct{})
			p.onAcquireEnd = func(AcquireEvent) {
				p.onAcquireEnd = nil
				go func() {
					c.Close()
					p.mu.Lock()
					p.closed = true
					p.mu.Unlock()
					close(closed)
				}()
				select {
				case <-closed:
				case <-time.After(200 * time.Millisecond):
				}
			}
			if _, err := mustMutex(t, c, "grant").Lock(ctx); err != nil {
				t.Fatal(err)
			}
			<-closed
			return nil
		}},
		{"close during a release", func(t *testing.T, c *Client, p *pairing, ctx context.Context) func() {
			m := mustMutex(t, c, "rel")
			lctx, err := m.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			started := make(chan struct{})
			p.onReleaseStart = func() { close(started) }
			pauseServer(t, ctx, node, 300*time.Millisecond)
			done := make(chan error, 1)
			go func() { done <- m.Unlock(lctx) }()
			<-started
			return func() { <-done }
		}},
		{"multilock and redlock", func(t *testing.T, c *Client, p *pairing, ctx context.Context) func() {
			ml := mustMulti(t, []Locker{mustMutex(t, c, "m1"), mustMutex(t, c, "m2")})
			lctx, err := ml.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := ml.Unlock(lctx); err != nil {
				t.Fatal(err)
			}
			cs := []*Client{c}
			for i := range 2 {
				// A server of its own: a RedLock refuses nodes on one server.
				o, err := New(redistest.Server(t).Client(t), WithKeyPrefix(fmt.Sprintf("%s%d:", redistest.Prefix(t), i)), WithObserver(p))
				if err != nil {
					t.Fatal(err)
				}
				defer o.Close()
				cs = append(cs, o)
			}
			rl := mustRedLock(t, "red", cs)
			if lctx, err = rl.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			if err := rl.Unlock(lctx); err != nil {
				t.Fatal(err)
			}
			return nil
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newPairing()
			c := newTestClient(t, node.Client(t), prefix, WithObserver(p))
			settle := tc.run(t, c, p, testCtx(t, 20*time.Second))
			p.closeAndCheck(t, c, settle)
		})
	}
}

// panickyCtx is a caller's context whose Done panics.
type panickyCtx struct{ context.Context }

func (panickyCtx) Done() <-chan struct{} { panic("caller's context: Done") }
