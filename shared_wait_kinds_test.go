package scriptlock

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Owner x waits for one lock name through a FairMutex (in its queue) and a
// Mutex (in its waiter set), which share the lock hash and the owner's
// field. The FairMutex wait gives up first, then the Mutex wait: each line
// must be left, or the FairMutex queue is held up by a place nobody waits in.
func TestSharedOwnerLeavesEachKindsLine(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	ca := newTestClient(t, node.Client(t), prefix)
	cb := newTestClient(t, node.Client(t), prefix)
	ctx := testCtx(t, 30*time.Second)
	holder := mustMutex(t, ca, "kinds-leaver")
	f, m := mustFair(t, cb, "kinds-leaver"), mustMutex(t, cb, "kinds-leaver")
	warmShared(t, m)
	warmShared(t, f)
	hctx, err := holder.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Unlock(hctx)
	_, field, _ := cb.owner(WithOwner(ctx, "x"), f)
	inQueue := func() bool {
		q, err := node.Do(t, "LRANGE", f.queue, "0", "-1").AsStrSlice()
		return err == nil && slices.Contains(q, field)
	}
	inSet := func() bool {
		_, err := node.Do(t, "ZSCORE", m.waiters, field).AsFloat64()
		return err == nil
	}
	fctx, cancelF := context.WithCancel(WithOwner(ctx, "x"))
	fdone := make(chan error, 1)
	go func() { _, err := f.Lock(fctx); fdone <- err }()
	if !eventually(3*time.Second, inQueue) {
		t.Fatal("the FairMutex wait did not queue")
	}
	mctx, cancelM := context.WithCancel(WithOwner(ctx, "x"))
	mdone := make(chan error, 1)
	go func() { _, err := m.Lock(mctx); mdone <- err }()
	if !eventually(3*time.Second, inSet) {
		t.Fatal("the Mutex wait did not register")
	}
	cancelF()
	<-fdone
	cancelM()
	<-mdone
	// A wait whose context ended leaves its line in the background.
	if !eventually(5*time.Second, func() bool { return !inQueue() && !inSet() }) {
		t.Fatalf("owner x gave up both waits but keeps a place: in the FairMutex queue %v, in the Mutex waiter set %v", inQueue(), inSet())
	}
}
