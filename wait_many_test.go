package scriptlock

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// Waiters on 200 different names on one Client, of every kind, share its
// pub/sub connection: every one is woken by its release (well before any
// fallback), and the Client's subscriptions all end afterwards.
func TestManyNamesOneClient(t *testing.T) {
	t.Parallel()
	p := newProxied(t)
	h := newTestClient(t, p.node.Client(t), WithKeyPrefix(p.c.cfg.prefix))
	c := p.c
	const perKind = 25 // 8 kinds: 200 names
	type waiter struct {
		wait    func(context.Context) error
		release func()
	}
	var ws []waiter
	for _, wk := range waitKinds {
		for i := range perKind {
			wait, release := wk.setup(t, h, c, fmt.Sprintf("many-%s-%d", wk.name, i))
			ws = append(ws, waiter{wait, release})
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(ws))
	ctx := testCtx(t, 30*time.Second)
	through := make([]time.Time, len(ws)) // when each waiter got through
	for i, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- w.wait(ctx)
			through[i] = time.Now()
		}()
	}
	// Every waiter subscribed and asleep: at most its fallback (1 s) would
	// pass before it called again unprompted.
	if !eventually(10*time.Second, func() bool {
		c.subs.mu.Lock()
		defer c.subs.mu.Unlock()
		n := 0
		for _, cs := range c.subs.chans {
			n += len(cs.waiters)
		}
		return n >= len(ws)
	}) {
		t.Fatal("not every waiter subscribed")
	}
	// Each waiter is timed from its own release: the 200 releases, one
	// after another, take long on a loaded machine.
	released := make([]time.Time, len(ws))
	for i, w := range ws {
		released[i] = time.Now()
		w.release()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("waiters still waiting 10s after every release")
	}
	slow, slowest := 0, time.Duration(0)
	for i := range ws {
		if took := through[i].Sub(released[i]); took > 1500*time.Millisecond {
			slow++
			slowest = max(slowest, took)
		}
	}
	if slow > 0 {
		t.Errorf("%d of %d waiters through over 1.5s after their releases began (the slowest after %s): woken by fallbacks, not releases", slow, len(ws), slowest)
	}
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if !eventually(5*time.Second, func() bool { return c.subs.open.Load() == 0 }) {
		t.Fatalf("%d subscriptions still open", c.subs.open.Load())
	}
	chans, err := p.node.Do(t, "PUBSUB", "CHANNELS").AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	if len(chans) != 0 {
		t.Fatalf("server still has %d subscribed channels: %v", len(chans), chans[:min(len(chans), 5)])
	}
}
