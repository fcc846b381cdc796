package scriptlock

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestJoinSubscriptionEndedByServer: a waiter's subscription that the server
// confirmed and then ended (a Cluster sends SUNSUBSCRIBE when the channel's
// slot moves) before the joining goroutine looked at it is a dead
// subscription, which the wait makes again: Lock must not fail with "client
// closed" on an open Client. Which of the two the joining goroutine sees
// first is Go's random choice, so the slot moves several times.
func TestJoinSubscriptionEndedByServer(t *testing.T) {
	cl := redistest.Cluster(t, 3)
	prefix := redistest.Prefix(t)
	opts := []Option{WithKeyPrefix(prefix), WithWaiterTimeout(30 * time.Second)}
	h := newTestClient(t, cl.Client(t), opts...)
	w := newTestClient(t, cl.Client(t), opts...)
	if !w.sharded() {
		t.Fatal("the Client does not use sharded pub/sub on a Cluster")
	}
	ctx := testCtx(t, 60*time.Second)
	moved := make(chan struct{}, 1)
	testHookJoin = func(channel string, ready, done <-chan struct{}) {
		if !strings.Contains(channel, prefix) {
			return
		}
		select {
		case <-ready:
		case <-time.After(5 * time.Second):
			t.Error("the subscription was not confirmed")
			return
		}
		select {
		case moved <- struct{}{}: // once per Lock
		default:
			return
		}
		mig := cl.StartMigration(t, channel)
		mig.Finish(t)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("moving the slot did not end the subscription")
		}
	}
	t.Cleanup(func() { testHookJoin = nil })
	for i := range 12 {
		// A lock of its own per round: a new wake channel, not the last
		// round's lingering subscription.
		name := "moved:" + strconv.Itoa(i)
		holder, waiter := mustMutex(t, h, name), mustMutex(t, w, name)
		held, err := holder.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-moved:
		default:
		}
		got := within(t, 20*time.Second, "the waiter's Lock", func() error {
			l, err := waiter.Lock(ctx)
			if err != nil {
				return err
			}
			return waiter.Unlock(l)
		})
		waitFor(t, 10*time.Second, "the slot moved under the waiter", func() bool { return len(moved) == 1 })
		if err := holder.Unlock(held); err != nil {
			t.Fatalf("round %d: Unlock: %v", i, err)
		}
		got()
	}
}
