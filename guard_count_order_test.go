package scriptlock

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestGuardCountOlderNotStoredOverNewer: with a primary frozen, the replica
// count a first acquisition started goes on in the background until that
// acquisition's deadline, and the next acquisitions start counts of their
// own. A count that started earlier and ended later must not be stored
// over a later one's: it keeps a replica that left in between, and every
// guarded acquisition on that primary then waits for it.
func TestGuardCountOlderNotStoredOverNewer(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithClusterReplicas(1), redistest.WithArgs("--cluster-require-full-coverage", "no"))
	c, err := New(cl.Client(t), sharedPrefix(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	prims := cl.Primaries(t)
	healthy, frozen := prims[0], prims[1]
	key := ""
	for i := range 10000 {
		if k := "order-" + strconv.Itoa(i); cl.NodeFor(t, k) == healthy {
			key = k
			break
		}
	}
	var replica *redistest.Node
	info, err := healthy.Do(t, "INFO", "replication").ToString()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range cl.Nodes {
		if strings.Contains(info, "port="+strconv.Itoa(n.Port)+",") {
			replica = n
		}
	}
	if replica == nil {
		t.Fatalf("no replica of %s in %q", healthy.Addr, info)
	}
	frozen.Pause()
	defer frozen.Resume()

	// The older count: answered at once, then waiting on the frozen primary.
	const older = 6 * time.Second
	actx, cancel := context.WithTimeout(context.Background(), older)
	defer cancel()
	olderEnds := time.Now().Add(older)
	if n := c.replicas(actx, key, 1); n != 1 {
		t.Fatalf("count with the replica attached: %d, want 1", n)
	}
	replica.Kill()
	waitFor(t, 10*time.Second, "the primary lost its replica", func() bool {
		s, _ := healthy.Do(t, "INFO", "replication").ToString()
		return strings.Contains(s, "connected_slaves:0")
	})
	// The newer count, which sees the replica gone.
	bctx, cancel2 := context.WithTimeout(context.Background(), time.Second)
	defer cancel2()
	if n := c.replicas(bctx, key, 1); n != 0 {
		t.Fatalf("count after the replica left: %d, want 0", n)
	}
	waitFor(t, 5*time.Second, "the newer count stored", func() bool { return c.replicasOf(key) == 0 && c.guard.checked.Load() != 0 })
	time.Sleep(time.Until(olderEnds) + time.Second)
	if n := c.replicasOf(key); n != 0 {
		t.Fatalf("the older count, ended after the newer one, was stored over it: the primary whose replica left counts %d replicas, want 0", n)
	}
}
