package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A subscription whose last waiter leaves while its server is frozen (a
// stall, a network partition) is unsubscribed when the server answers
// again: the receive loop waits (until the Client closes) for the answer
// to the PING that checks the server can take the UNSUBSCRIBE, which then
// goes out.
func TestUnsubscribeWhileServerFrozen(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	w := subscribedWaiter(t, node, "frozen-unsubscribe")
	c, s, leave, waited := w.c, w.s, w.leave, w.waited
	node.Pause()
	defer node.Resume()
	leave() // the only waiter leaves while the server is frozen
	<-waited
	// Past the second an unsubscribe was bounded by: the receive loop
	// waits for the server's answer to its PING, its channel closing.
	time.Sleep(1500 * time.Millisecond)
	c.subs.mu.Lock()
	cs := c.subs.chans[s.channel]
	c.subs.mu.Unlock()
	if cs == nil || !cs.closing {
		t.Fatal("the subscription's receive loop did not wait for the frozen server")
	}
	node.Resume()
	if !eventually(3*time.Second, func() bool { return subscribers(t, node, false, s.channel) == 0 }) {
		t.Errorf("%d subscribed to %s after its only waiter left while the server was frozen, and it answered again", subscribers(t, node, false, s.channel), s.channel)
	}
}

// Close ends the wait of a receive loop for a frozen server's answer to
// its PING within about a second, and leaves the subscription rather than
// send the UNSUBSCRIBE blind.
func TestCloseWhileUnsubscribeAwaitsFrozenServer(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	w := subscribedWaiter(t, node, "frozen-close-unsubscribe")
	rc, c, ctx, leave, waited := w.rc, w.c, w.ctx, w.leave, w.waited
	node.Pause()
	defer node.Resume()
	leave()
	<-waited
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	c.Close()
	if took := time.Since(start); took > 1500*time.Millisecond {
		t.Errorf("Close took %v while an unsubscribe waited for the frozen server", took)
	}
	node.Resume()
	if err := rc.Do(ctx, rc.B().Ping().Build()).Error(); err != nil {
		t.Fatalf("PING after the server runs again: %v", err)
	}
}
