package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A waiter on a lock a Redisson client holds listens for Redisson's "0" on
// the lock's channel as well as on its own wake channel. When only its own
// wake subscription ends (the server unsubscribes it: an UNSUBSCRIBE on the
// shared connection, or that subscription's node restarting on a Cluster
// without sharded pub/sub) and is made again, Redisson's release must still
// wake it, not leave it until its fallback (here 10 s).
func TestForeignWaitAfterOwnWakeResubscribed(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	c := newTestClient(t, node.Client(t), prefix, WithWaiterTimeout(30*time.Second))
	m := mustMutex(t, c, "zero-resubscribe")
	ctx := testCtx(t, 30*time.Second)
	java := javaClient{rc: node.Client(t), field: "5d0e3c41-2f6a-4c1b-8e7d-1a2b3c4d5e6f:12"}
	if held, err := java.acquire(ctx, m.Key()); err != nil || !held {
		t.Fatalf("Redisson acquire: %v, %v", held, err)
	}
	done := make(chan error, 1)
	go func() {
		l, err := m.Lock(ctx)
		if err == nil {
			err = m.Unlock(l)
		}
		done <- err
	}()
	ownWake := m.wake + ":" + c.ID()
	waitFor(t, 5*time.Second, "the waiter to listen on both channels", func() bool {
		return subscribers(t, node, false, ownWake) == 1 && subscribers(t, node, false, m.channel) == 1
	})
	if err := c.rc.Do(ctx, c.rc.B().Unsubscribe().Channel(ownWake).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the waiter calls again and subscribes again
	waitFor(t, 5*time.Second, "the waiter to listen on both channels again", func() bool {
		return subscribers(t, node, false, ownWake) == 1 && subscribers(t, node, false, m.channel) == 1
	})
	if _, err := java.release(ctx, m.Key()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("waiter not through 2s after Redisson's release: its \"0\" went to a wake channel no longer waited on")
	}
}
