package scriptlock

import (
	"strings"
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
	// Runs for 700 ms by the server's clock.
	const slow = `local s = redis.call('time')
while true do
  local n = redis.call('time')
  if (n[1] - s[1]) * 1000000 + n[2] - s[2] > 700000 then return 1 end
end`
	script := within(t, 10*time.Second, "the slow script", func() error { return node.Do(t, "EVAL", slow, "0").Error() })
	probe := node.Client(t)
	for deadline := time.Now().Add(5 * time.Second); ; {
		err := probe.Do(ctx, probe.B().Ping().Build()).Error()
		if err != nil && strings.HasPrefix(err.Error(), "BUSY ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server never answered BUSY (last: %v)", err)
		}
		time.Sleep(time.Millisecond)
	}
	leave() // the only waiter leaves while the server is busy
	<-waited
	script()
	// The Client's connection still answers each command with its own reply.
	for i := range 20 {
		key := redistest.Prefix(t) + "echo"
		if err := rc.Do(ctx, rc.B().Set().Key(key).Value(strings.Repeat("x", i+1)).Build()).Error(); err != nil {
			t.Fatalf("SET after the busy script: %v", err)
		}
		if v, err := rc.Do(ctx, rc.B().Get().Key(key).Build()).ToString(); err != nil || len(v) != i+1 {
			t.Fatalf("GET after the busy script: %q, %v; want %d bytes", v, err, i+1)
		}
	}
	if !eventually(2*time.Second, func() bool { return subscribers(t, node, false, s.channel) == 0 }) {
		t.Errorf("%d subscribed to %s after its only waiter left and the script ended", subscribers(t, node, false, s.channel), s.channel)
	}
}
