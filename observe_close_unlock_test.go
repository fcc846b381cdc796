package scriptlock

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// stallCtx stalls, once armed, the context package's look-up of a parent
// cancel context (a *int key): it runs as a lock context ends, between the
// hold's end and the report of it.
type stallCtx struct {
	context.Context
	armed   atomic.Bool
	stalled chan struct{}
	resume  chan struct{}
}

func (s *stallCtx) Value(key any) any {
	if _, ok := key.(*int); ok && s.armed.CompareAndSwap(true, false) {
		close(s.stalled)
		<-s.resume
	}
	return s.Context.Value(key)
}

// An Unlock begun while Close waits for an acquisition in flight releases
// the lock; the end of its hold is reported before Close returns, not after.
func TestObserverUnlockDuringCloseReportedBeforeClose(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	p := newPairing()
	c := newTestClient(t, node.Client(t), WithObserver(p))
	ctx := testCtx(t, 20*time.Second)
	sc := &stallCtx{Context: ctx, stalled: make(chan struct{}), resume: make(chan struct{})}
	a := mustMutex(t, c, "a")
	lctx, err := a.Lock(sc)
	if err != nil {
		t.Fatal(err)
	}
	// The lock context's cancellable context is made on first use: made
	// now, its end looks up sc's cancel context, where it stalls.
	_ = lctx.Done()

	// An acquisition in flight, held between its grant and its
	// registration, keeps Close from ending the holds.
	granted, proceed := make(chan struct{}), make(chan struct{})
	c.setGrantHook(func() {
		close(granted)
		<-proceed
	})
	defer func() { c.setGrantHook(nil) }()
	locked := make(chan struct{})
	go func() {
		defer close(locked)
		_, _ = mustMutex(t, c, "b").Lock(ctx)
	}()
	<-granted
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		c.Close()
	}()
	for !c.closed() {
		time.Sleep(time.Millisecond)
	}

	sc.armed.Store(true)
	unlocked := make(chan struct{})
	go func() {
		defer close(unlocked)
		_ = a.Unlock(lctx)
	}()
	select {
	case <-sc.stalled: // the hold has ended, its report is to come
	case <-time.After(10 * time.Second):
		t.Fatal("Unlock did not end the hold")
	}
	close(proceed)
	<-locked
	select {
	case <-closed:
		p.mu.Lock()
		p.closed = true
		p.mu.Unlock()
	case <-time.After(time.Second):
		// Close waits for the report: as it should.
	}
	close(sc.resume)
	<-unlocked
	<-closed
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.problems {
		t.Error(s)
	}
}
