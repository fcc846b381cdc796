package scriptlock

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestWatchdogFrozenNodeGuardedRoundsSpareOtherNodes: under the failover
// guard on a Cluster, each slot's renewals go out on a dedicated connection,
// a bounded number at a time. A frozen node's rounds each wait until their
// holds' loss deadlines: with holds in enough of its slots they used to take
// every place, for as long as their leases, and the renewals of a hold on a
// healthy node waited behind them until that hold was lost.
func TestWatchdogFrozenNodeGuardedRoundsSpareOtherNodes(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithClusterReplicas(1), redistest.WithArgs("--cluster-require-full-coverage", "no"))
	c, err := New(cl.Client(t), sharedPrefix(t), WithFailoverGuard(true, 500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := testCtx(t, 90*time.Second)
	prims := cl.Primaries(t)
	healthy, frozen := prims[0], prims[1]

	// Holds with long leases in more of the frozen node's slots than the
	// guarded rounds that may be in flight at once.
	slots := map[uint16]bool{}
	for i := 0; len(slots) < 2*guardedGroups && i < 100000; i++ {
		m := mustMutex(t, c, "frozen-"+strconv.Itoa(i), WithWatchdog(60*time.Second, time.Second))
		if cl.NodeFor(t, m.Key()) != frozen || slots[keySlot(m.Key())] {
			continue
		}
		slots[keySlot(m.Key())] = true
		if _, err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if len(slots) < 2*guardedGroups {
		t.Fatalf("found %d slots of the frozen node", len(slots))
	}
	const lease = 3 * time.Second
	var a *Mutex
	for i := 0; a == nil; i++ {
		m := mustMutex(t, c, "healthy-"+strconv.Itoa(i), WithWatchdog(lease, time.Second))
		if cl.NodeFor(t, m.Key()) == healthy {
			a = m
		}
	}
	actx, err := a.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	frozen.Pause()
	defer frozen.Resume()

	select {
	case <-actx.Done():
		t.Fatalf("the hold on a healthy node was lost while another node was frozen: %v", context.Cause(actx))
	case <-time.After(3 * lease):
	}
	st, err := a.State(actx)
	if err != nil || st.HoldCount != 1 {
		t.Fatalf("healthy node's lock: %+v, %v; want held once by its owner", st, err)
	}
	if err := a.Unlock(actx); err != nil {
		t.Fatal(err)
	}
}
