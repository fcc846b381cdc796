package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A waiter woken because its own wake subscription ended must find that
// subscription dead when its attempt comes back, however late the receive
// goroutine that woke it runs on: it subscribes again then. Woken before the
// subscription counted as ended, the attempt it made found it live, and the
// waiter slept until its fallback (here 10 s) on a channel nobody listened
// on, deaf to a release naming it.
func TestWaiterWokenBySubscriptionEndSubscribesAgain(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	c := newTestClient(t, node.Client(t), sharedPrefix(t), WithWaiterTimeout(30*time.Second))
	m := mustMutex(t, c, "woken-dead")
	ctx := testCtx(t, 30*time.Second)
	java := javaClient{rc: node.Client(t), field: "5d0e3c41-2f6a-4c1b-8e7d-1a2b3c4d5e6f:13"}
	if held, err := java.acquire(ctx, m.Key()); err != nil || !held {
		t.Fatalf("Redisson acquire: %v, %v", held, err)
	}
	ownWake := m.wake + ":" + c.ID()
	// The receive goroutine of the ended subscription stalls once it has
	// woken the waiter (a loaded machine can keep it off the CPU for longer
	// than the waiter's attempt takes), until the end of the test.
	stalled := make(chan struct{})
	defer close(stalled)
	c.subs.testHookEnded = func(channel string) {
		if channel == ownWake {
			<-stalled
		}
	}
	done := make(chan error, 1)
	go func() {
		l, err := m.Lock(ctx)
		if err == nil {
			err = m.Unlock(l)
		}
		done <- err
	}()
	both := func() bool {
		return subscribers(t, node, false, ownWake) == 1 && subscribers(t, node, false, m.channel) == 1
	}
	waitFor(t, 5*time.Second, "the waiter to listen on both channels", both)
	before := scriptCalls(t, node)
	if err := c.rc.Do(ctx, c.rc.B().Unsubscribe().Channel(ownWake).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the waiter's attempt on its subscription's end", func() bool { return scriptCalls(t, node) > before })
	waitFor(t, 5*time.Second, "the waiter to listen on both channels again", both)
	if _, err := java.release(ctx, m.Key()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waiter not through 5s after Redisson's release")
	}
}
