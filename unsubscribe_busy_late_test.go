package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A script that began before busy-reply-threshold and runs past it leaves
// the server silent for the threshold, then answering BUSY: the PING sent
// before an UNSUBSCRIBE went unanswered within its second, and the
// UNSUBSCRIBE was queued behind it all the same; once the threshold passed
// the server answered the PING, the UNSUBSCRIBE and the PING rueidis sends
// behind it with BUSY, and the reply left over panicked the process
// ("protocol bug, message handled out of order"), or answered the
// connection's next command. The UNSUBSCRIBE now goes only after a PING
// answered as rueidis can take it.
func TestUnsubscribeWhileScriptBelowBusyThreshold(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	if err := node.Do(t, "CONFIG", "SET", "busy-reply-threshold", "1500").Error(); err != nil {
		t.Fatal(err)
	}
	w := subscribedWaiter(t, node, "busy-late-unsubscribe")
	rc, s, ctx, leave, waited := w.rc, w.s, w.ctx, w.leave, w.waited
	script := slowScript(t, node, 2200*time.Millisecond) // silent for 1.5 s, then BUSY
	probe := node.Client(t)
	for deadline := time.Now().Add(5 * time.Second); ; {
		pctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		err := probe.Do(pctx, probe.B().Ping().Build()).Error()
		cancel()
		if err != nil && pctx.Err() != nil {
			break // not answered: the script runs, below the threshold
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server kept answering (last: %v)", err)
		}
		time.Sleep(time.Millisecond)
	}
	leave() // the only waiter leaves while the script runs, before BUSY
	<-waited
	script()
	repliesInOrder(t, ctx, rc)
	if !eventually(2*time.Second, func() bool { return subscribers(t, node, false, s.channel) == 0 }) {
		t.Errorf("%d subscribed to %s after its only waiter left and the script ended", subscribers(t, node, false, s.channel), s.channel)
	}
}
