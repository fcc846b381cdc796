package scriptlock

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestShardedProbeFrozenNodeSparesOtherNodes: a Client on a Cluster asks the
// server once whether it has sharded pub/sub. It asked one node picked at
// random, for up to 2 seconds whatever the caller's context: with that node
// frozen, the first Lock or Unlock of a lock on a healthy node took 2
// seconds, past a shorter deadline of its caller.
func TestShardedProbeFrozenNodeSparesOtherNodes(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithArgs("--cluster-require-full-coverage", "no"))
	rc := cl.Client(t)
	prims := cl.Primaries(t)
	healthy, frozen := prims[0], prims[1]
	// Each Client asks once, a node picked at random: enough of them that
	// some pick the frozen node.
	const clients = 12
	ms := make([]*Mutex, clients)
	for i := range ms {
		c, err := New(rc, sharedPrefix(t), WithFailoverGuard(false, 0))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for j := 0; ms[i] == nil; j++ {
			m := mustMutex(t, c, "healthy-"+strconv.Itoa(j))
			if cl.NodeFor(t, m.Key()) == healthy {
				ms[i] = m
			}
		}
	}
	// Connections to every node open, as in a service that has been running.
	for addr, n := range rc.Nodes() {
		if err := n.Do(context.Background(), n.B().Ping().Build()).Error(); err != nil {
			t.Fatalf("PING %s: %v", addr, err)
		}
	}
	frozen.Pause()
	defer frozen.Resume()

	const bound = time.Second
	for i, m := range ms {
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		l, err := m.Lock(ctx)
		cancel()
		if err != nil {
			t.Fatalf("client %d: Lock of a lock on a healthy node while another node is frozen: %v", i, err)
		}
		uctx, cancel := context.WithTimeout(l, bound)
		err = m.Unlock(uctx)
		cancel()
		if err != nil {
			t.Fatalf("client %d: Unlock of a lock on a healthy node while another node is frozen: %v", i, err)
		}
		// Both calls within their deadlines, with room for a loaded machine.
		if d := time.Since(start); d > 2*bound-bound/4 {
			t.Fatalf("client %d: Lock and Unlock of a lock on a healthy node took %v while another node was frozen (each call's deadline %v)", i, d, bound)
		}
	}
}
