package scriptlock

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestPlainPubSubFrozenNodeSparesOtherNodes: on a Cluster without sharded
// pub/sub, a waiter's SUBSCRIBE went to a node picked at random. With that
// node frozen, the subscription was never confirmed, and a Lock waiting for
// a lock on a healthy node failed with its context although the holder
// released it.
func TestPlainPubSubFrozenNodeSparesOtherNodes(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithArgs("--cluster-require-full-coverage", "no"))
	rc := cl.Client(t)
	prefix := sharedPrefix(t)
	opts := []Option{prefix, WithShardedPubSub(false), WithFailoverGuard(false, 0)}
	holder, err := New(rc, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	waiter, err := New(cl.Client(t), opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer waiter.Close()
	prims := cl.Primaries(t)
	healthy, frozen := prims[0], prims[1]
	// Enough locks, each with a channel of its own, that some waiter's
	// subscription would go to the frozen node.
	const locks = 10
	var names []string
	for i := 0; len(names) < locks; i++ {
		name := "healthy-" + strconv.Itoa(i)
		if cl.NodeFor(t, mustMutex(t, holder, name).Key()) == healthy {
			names = append(names, name)
		}
	}
	ctx := testCtx(t, 60*time.Second)
	held := make([]context.Context, locks)
	for i, name := range names {
		if held[i], err = mustMutex(t, holder, name).Lock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []*Client{holder, waiter} {
		for addr, n := range c.rc.Nodes() {
			if err := n.Do(ctx, n.B().Ping().Build()).Error(); err != nil {
				t.Fatalf("PING %s: %v", addr, err)
			}
		}
	}
	frozen.Pause()
	defer frozen.Resume()

	const bound = 5 * time.Second
	errs := make([]error, locks)
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := mustMutex(t, waiter, name)
			wctx, cancel := context.WithTimeout(ctx, bound)
			defer cancel()
			l, err := m.Lock(wctx)
			if err != nil {
				errs[i] = err
				return
			}
			errs[i] = m.Unlock(l)
		}()
	}
	time.Sleep(500 * time.Millisecond) // the waiters wait
	for i, name := range names {
		if err := mustMutex(t, holder, name).Unlock(held[i]); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("waiter for %s, on a healthy node, released by its holder while another node was frozen: %v", names[i], err)
		}
	}
}
