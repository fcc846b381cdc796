package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Close ends the Client's subscriptions on the server too: rc stays open,
// and a subscription Close only stopped listening to (a lingering wake
// channel, a waiter's channel) stayed on its pub/sub connection for as long
// as rc lived.
func TestCloseUnsubscribes(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	rc := node.Client(t)
	h := newTestClient(t, rc)
	c, err := New(rc, WithKeyPrefix(h.cfg.prefix))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	hm := mustMutex(t, h, "close-unsub")
	hctx, err := hm.Lock(testCtx(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer hm.Unlock(hctx)
	m := mustMutex(t, c, "close-unsub")
	// A waiter that gave up: its client's wake channel lingers.
	if _, err := m.TryLock(testCtx(t, 5*time.Second), 100*time.Millisecond); err == nil {
		t.Fatal("TryLock of a held lock succeeded")
	}
	// A latch waiter still waiting when Close begins.
	l := mustLatch(t, c, "close-unsub-latch")
	if _, err := mustLatch(t, h, "close-unsub-latch").TrySetCount(testCtx(t, 5*time.Second), 1); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- l.Await(testCtx(t, 10*time.Second)) }()
	ownWake := m.wake + ":" + c.ID()
	if !eventually(3*time.Second, func() bool {
		return subscribers(t, node, false, ownWake) == 1 && subscribers(t, node, false, l.channel) == 1
	}) {
		t.Fatal("waiters not subscribed")
	}
	c.Close()
	<-waited
	if !eventually(2*time.Second, func() bool {
		return subscribers(t, node, false, ownWake) == 0 && subscribers(t, node, false, l.channel) == 0
	}) {
		t.Fatalf("after Close: %d subscribed to %s, %d to %s; want none", subscribers(t, node, false, ownWake), ownWake,
			subscribers(t, node, false, l.channel), l.channel)
	}
}
