package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A waiter that leaves before its subscription was even sent (its wait ran
// out as it subscribed) must not have its UNSUBSCRIBE overtake the
// SUBSCRIBE: the server would then keep the subscription until the
// unsubscribe's 2 s timeout, and the next waiter on the channel would wait
// for that in its join.
func TestUnsubscribeAfterLateSubscribe(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c, err := New(node.Client(t), WithKeyPrefix(redistest.Prefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		c.Close()
		c.subs.testHookReceive = nil
	}()
	l := mustLatch(t, c, "late-subscribe")
	if _, err := l.TrySetCount(testCtx(t, 5*time.Second), 1); err != nil {
		t.Fatal(err)
	}
	subscribe := make(chan struct{})
	c.subs.testHookReceive = func(channel string) {
		if channel == l.channel {
			<-subscribe
		}
	}
	// Its subscription never confirmed, the wait ran out unanswered.
	if ok, err := l.AwaitTimeout(testCtx(t, 5*time.Second), 200*time.Millisecond); ok || !unansweredErr(err) {
		t.Fatalf("AwaitTimeout: %v, %v; want false, a NotAcquiredError with Unanswered", ok, err)
	}
	time.Sleep(100 * time.Millisecond) // the leaving waiter's unsubscribe is under way
	close(subscribe)
	if !eventually(time.Second, func() bool { return subscribers(t, node, false, l.channel) == 0 }) {
		t.Fatalf("%d subscribed to %s 1s after its only waiter left", subscribers(t, node, false, l.channel), l.channel)
	}
}
