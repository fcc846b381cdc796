package scriptlock

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestGuardCountFrozenNodeSparesOtherNodes: the failover guard counts the
// replicas of every primary before a Client's first guarded acquisition (and
// again after it sat idle). With one primary frozen that count waited for
// its answer until the caller's context ended, and a Lock of a lock on a
// healthy node failed with the context's error. It must wait for the
// primary serving its own key only.
func TestGuardCountFrozenNodeSparesOtherNodes(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithClusterReplicas(1), redistest.WithArgs("--cluster-require-full-coverage", "no"))
	c, err := New(cl.Client(t), sharedPrefix(t), loadedGuard())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	prims := cl.Primaries(t)
	healthy, frozen := prims[0], prims[1]
	find := func(node *redistest.Node, prefix string) *Mutex {
		for i := range 10000 {
			m := mustMutex(t, c, prefix+strconv.Itoa(i))
			if cl.NodeFor(t, m.Key()) == node {
				return m
			}
		}
		t.Fatalf("no name for node %s", node.Addr)
		return nil
	}
	a, b := find(healthy, "healthy-"), find(frozen, "frozen-")
	frozen.Pause()
	defer frozen.Resume()

	const bound = 3 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	l, err := a.Lock(ctx)
	if err != nil {
		t.Fatalf("Lock of a lock on a healthy node while another primary is frozen: %v", err)
	}
	if err := a.Unlock(l); err != nil {
		t.Fatal(err)
	}
	// The frozen primary's own lock costs its caller's context, no more.
	bctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	if _, err := b.Lock(bctx); err == nil {
		t.Fatal("Lock of a lock on the frozen primary succeeded")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("Lock of a lock on the frozen primary took %v with a context of 1s", d)
	}
}
