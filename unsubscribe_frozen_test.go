package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A subscription whose last waiter leaves while its server is frozen (a
// stall, a network partition) is unsubscribed when the server answers
// again: the UNSUBSCRIBE waits on the connection, behind the PING that
// checks the server can take it, and goes out though neither was answered
// within its second.
func TestUnsubscribeWhileServerFrozen(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := node.Client(t)
	c := newTestClient(t, rc, WithFailoverGuard(false, 0))
	s := mustSem(t, c, "frozen-unsubscribe")
	ctx := testCtx(t, 20*time.Second)
	if _, err := s.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.TryAcquire(ctx, 1, 0); err != nil {
		t.Fatal(err)
	}
	wctx, leave := context.WithCancel(ctx)
	waited := make(chan error, 1)
	go func() { waited <- s.TryAcquire(wctx, 1, 10*time.Second) }()
	if !eventually(5*time.Second, func() bool { return subscribers(t, node, false, s.channel) == 1 }) {
		t.Fatal("the waiter did not subscribe")
	}
	node.Pause()
	defer node.Resume()
	leave() // the only waiter leaves while the server is frozen
	<-waited
	// The unsubscribe's second passes.
	if !eventually(3*time.Second, func() bool {
		c.subs.mu.Lock()
		defer c.subs.mu.Unlock()
		return c.subs.chans[s.channel] == nil
	}) {
		t.Fatal("the subscription's receive loop did not end")
	}
	node.Resume()
	if !eventually(3*time.Second, func() bool { return subscribers(t, node, false, s.channel) == 0 }) {
		t.Errorf("%d subscribed to %s after its only waiter left while the server was frozen, and it answered again", subscribers(t, node, false, s.channel), s.channel)
	}
}
