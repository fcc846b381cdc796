package scriptlock

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestGuardSlotMapOlderNotStoredOverNewer: the slot map a replica count read
// (which node a guarded watchdog round counts against) is stored with the
// count, not whenever the count ends: a count that started before a slot
// moved and ended after a newer count must not put back the old owner.
func TestGuardSlotMapOlderNotStoredOverNewer(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithArgs("--cluster-require-full-coverage", "no"))
	c, err := New(cl.Client(t), sharedPrefix(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	prims := cl.Primaries(t)
	from, frozen, to := prims[0], prims[1], prims[2]
	key := ""
	for i := range 10000 {
		if k := "order-" + strconv.Itoa(i); cl.NodeFor(t, k) == from {
			key = k
			break
		}
	}
	slot := strconv.Itoa(int(keySlot(key)))
	toID, err := to.Do(t, "CLUSTER", "MYID").ToString()
	if err != nil {
		t.Fatal(err)
	}
	frozen.Pause()
	defer frozen.Resume()

	// The older count: it reads the slot map at once, then waits on the
	// frozen primary until its deadline.
	const older = 5 * time.Second
	actx, cancel := context.WithTimeout(context.Background(), older)
	defer cancel()
	olderEnds := time.Now().Add(older)
	c.replicas(actx, key, 1) // returns once the key's primary answered

	// The key's (empty) slot moves to another primary; a newer count reads
	// that and is stored.
	for _, n := range []*redistest.Node{to, from} {
		if err := n.Do(t, "CLUSTER", "SETSLOT", slot, "NODE", toID).Error(); err != nil {
			t.Fatal(err)
		}
	}
	bctx, cancel2 := context.WithTimeout(context.Background(), time.Second)
	defer cancel2()
	c.replicas(bctx, key, 1)
	waitFor(t, 3*time.Second, "the newer count's slot map", func() bool { return c.nodeOf(key) == to.Addr })
	time.Sleep(time.Until(olderEnds) + time.Second)
	if got := c.nodeOf(key); got != to.Addr {
		t.Fatalf("the older count, ended after the newer one, put back its slot map: slot %s served by %s, want %s", slot, got, to.Addr)
	}
}
