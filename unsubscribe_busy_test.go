package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A server running someone's script past busy-reply-threshold answers an
// UNSUBSCRIBE with BUSY, and the PING rueidis sends behind it too: rueidis
// took the first BUSY for the PING's answer, and the second, left over,
// panicked the process ("protocol bug, message handled out of order"), or
// answered the connection's next command, every later command getting its
// predecessor's reply. A waiter that left while the server was busy had its
// subscription ended that way. The UNSUBSCRIBE now waits (within its
// second) for the server to answer a PING.
func TestUnsubscribeWhileServerBusy(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	if err := node.Do(t, "CONFIG", "SET", "busy-reply-threshold", "50").Error(); err != nil {
		t.Fatal(err)
	}
	w := subscribedWaiter(t, node, "busy-unsubscribe")
	rc, s, ctx, leave, waited := w.rc, w.s, w.ctx, w.leave, w.waited
	script := slowScript(t, node, 700*time.Millisecond)
	awaitBusy(t, ctx, node.Client(t))
	leave() // the only waiter leaves while the server is busy
	<-waited
	script()
	repliesInOrder(t, ctx, rc)
	if !eventually(2*time.Second, func() bool { return subscribers(t, node, false, s.channel) == 0 }) {
		t.Errorf("%d subscribed to %s after its only waiter left and the script ended", subscribers(t, node, false, s.channel), s.channel)
	}
}
