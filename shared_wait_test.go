package scriptlock

import (
	"context"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Two goroutines of owner x wait on a Mutex. The first registered in the
// waiter set; the second's attempts are refused with OOM (nothing ran), so
// it never registered. The first gives up while the second still waits,
// leaving their shared place to it; then the second gives up too. The place
// must not stay in the set with nobody waiting there.
func TestSharedOwnerLastLeaverLeavesPlace(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	prefix := sharedPrefix(t)
	ca := newTestClient(t, node.Client(t), prefix)
	cb := newTestClient(t, node.Client(t), prefix)
	ctx := testCtx(t, 30*time.Second)
	holder, m := mustMutex(t, ca, "last-leaver"), mustMutex(t, cb, "last-leaver")
	warmShared(t, m)
	hctx, err := holder.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Unlock(hctx)
	_, field, _ := cb.owner(WithOwner(ctx, "x"), m)
	inSet := func() bool {
		_, err := node.Do(t, "ZSCORE", m.waiters, field).AsFloat64()
		return err == nil
	}
	actx, cancelA := context.WithCancel(WithOwner(ctx, "x"))
	adone := make(chan error, 1)
	go func() { _, err := m.Lock(actx); adone <- err }()
	if !eventually(3*time.Second, inSet) {
		t.Fatal("the first goroutine did not register")
	}
	node.Do(t, "CONFIG", "SET", "maxmemory", "1")
	defer node.Do(t, "CONFIG", "SET", "maxmemory", "0")
	bctx, cancelB := context.WithCancel(WithOwner(ctx, "x"))
	bdone := make(chan error, 1)
	go func() { _, err := m.Lock(bctx); bdone <- err }()
	time.Sleep(200 * time.Millisecond) // refused with OOM, again and again
	cancelA()
	<-adone
	time.Sleep(100 * time.Millisecond)
	cancelB()
	<-bdone
	node.Do(t, "CONFIG", "SET", "maxmemory", "0")
	time.Sleep(200 * time.Millisecond)
	if inSet() {
		t.Fatal("owner x's place stays in the waiter set after every goroutine of it gave up: a release hands the lock to nobody, and the waiters behind wait for their fallback")
	}
}
