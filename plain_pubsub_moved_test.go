package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestPlainPubSubUnsubscribeAfterSlotMoved: on a Cluster without sharded
// pub/sub a waiter subscribes on the node serving its lock's slot. Once the
// slot moved to another node, the UNSUBSCRIBE went by the slot to the new
// node, which had no such subscription: the old node kept it for as long as
// the connection lived (one more per lock name and Client at each reshard),
// and the subscription's end waited for the unsubscribe's 2 s timeout,
// which a new waiter of the lock waited out too. Close left such a
// subscription on the old node in the same way.
func TestPlainPubSubUnsubscribeAfterSlotMoved(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3)
	opts := []Option{sharedPrefix(t), WithShardedPubSub(false), WithFailoverGuard(false, 0)}
	h := newTestClient(t, cl.Client(t), opts...)
	w := newTestClient(t, cl.Client(t), opts...)
	ctx := testCtx(t, 60*time.Second)
	holder, waiter := mustMutex(t, h, "moved"), mustMutex(t, w, "moved")
	held, err := holder.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := within(t, 20*time.Second, "the waiter's Lock", func() error {
		l, err := waiter.Lock(ctx)
		if err != nil {
			return err
		}
		return waiter.Unlock(l)
	})
	wake := w.subs.ownWake(waiter.wake)
	from := cl.NodeFor(t, waiter.Key())
	if !eventually(10*time.Second, func() bool { return subscribers(t, from, false, wake) == 1 }) {
		t.Fatal("the waiter did not subscribe on the node serving its lock")
	}
	mig := cl.StartMigration(t, waiter.Key())
	mig.Finish(t)
	if err := holder.Unlock(held); err != nil {
		t.Fatal(err)
	}
	got()
	// The wake channel lingers a second after its last waiter left, then
	// is unsubscribed.
	left := time.Now()
	if !eventually(subscriptionLinger+time.Second, func() bool {
		w.subs.mu.Lock()
		defer w.subs.mu.Unlock()
		return w.subs.chans[wake] == nil
	}) {
		t.Errorf("the subscription had not ended %v after its last waiter left", time.Since(left).Round(time.Millisecond))
	}
	for _, n := range cl.Nodes {
		if k := subscribers(t, n, false, wake); k != 0 {
			t.Errorf("%d subscribed to %s on %s (the node the slot moved from: %v) after the waiter left", k, wake, n.Addr, n == from)
		}
	}

	// Close ends a waiting subscription whose slot moved on the node it
	// was made on as well.
	if held, err = holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer holder.Unlock(held)
	waiting := make(chan error, 1)
	go func() {
		_, err := waiter.Lock(ctx)
		waiting <- err
	}()
	from = cl.NodeFor(t, waiter.Key())
	if !eventually(10*time.Second, func() bool { return subscribers(t, from, false, wake) == 1 }) {
		t.Fatal("the second waiter did not subscribe on the node serving its lock")
	}
	mig = cl.StartMigration(t, waiter.Key())
	mig.Finish(t)
	w.Close()
	if err := <-waiting; err == nil {
		t.Fatal("a Lock waiting as Close began acquired the lock")
	}
	for _, n := range cl.Nodes {
		if k := subscribers(t, n, false, wake); k != 0 {
			t.Errorf("%d subscribed to %s on %s (where the waiter subscribed before the slot moved: %v) after Close", k, wake, n.Addr, n == from)
		}
	}
}
