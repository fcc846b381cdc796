package scriptlock

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestWatchdogFrozenClusterNodeSparesOtherNodes: on a Cluster, a node that
// stops answering must not cost the holds on the other nodes their locks.
// The renewals of one round used to go out as one pipelined call, whose
// replies came back only when every node had answered or the round's
// deadline (the earliest loss deadline among its holds) had passed: a hold
// on a healthy node whose loss deadline was the earliest was declared lost
// at that deadline, with its renewal long confirmed.
// The failover guard's renewals (each slot's with a WAIT, on connections of
// their own) had the same fault.
func TestWatchdogFrozenClusterNodeSparesOtherNodes(t *testing.T) {
	t.Parallel()
	t.Run("plain", func(t *testing.T) {
		t.Parallel()
		testFrozenClusterNode(t, false)
	})
	t.Run("guarded", func(t *testing.T) {
		t.Parallel()
		testFrozenClusterNode(t, true)
	})
}

func testFrozenClusterNode(t *testing.T, guarded bool) {
	// The other nodes keep serving their slots while one is down (with
	// full coverage required they refuse every command once they mark it
	// failed, and no lock can be renewed anywhere).
	opts := []redistest.Option{redistest.WithArgs("--cluster-require-full-coverage", "no")}
	copts := []Option{sharedPrefix(t), WithWatchdog(3*time.Second, time.Second)}
	if guarded {
		opts = append(opts, redistest.WithClusterReplicas(1))
		copts = append(copts, WithFailoverGuard(true, 500*time.Millisecond))
	}
	cl := redistest.Cluster(t, 3, opts...)
	const lease = 3 * time.Second
	c, err := New(cl.Client(t), copts...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := testCtx(t, 60*time.Second)
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
	// a first: its loss deadline is the earlier of the two, and both are
	// due in the same round.
	actx, err := a.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bctx, err := b.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	frozen.Pause()
	defer frozen.Resume()

	// The frozen node's hold is lost by its lease's end at the latest.
	select {
	case <-bctx.Done():
		if cause := context.Cause(bctx); !errors.Is(cause, ErrLockLost) {
			t.Fatalf("hold on the frozen node ended with %v, want ErrLockLost", cause)
		}
	case <-time.After(lease + time.Second):
		t.Fatalf("the hold on the frozen node still looked held %v after the node froze (lease %v)", lease+time.Second, lease)
	}
	// The healthy node's hold lives on: its renewals are answered.
	select {
	case <-actx.Done():
		t.Fatalf("the hold on a healthy node was lost while another node was frozen: %v", context.Cause(actx))
	case <-time.After(2 * lease):
	}
	st, err := a.State(actx)
	if err != nil || st.HoldCount != 1 {
		t.Fatalf("healthy node's lock: %+v, %v; want held once by its owner", st, err)
	}
	if err := a.Unlock(actx); err != nil {
		t.Fatal(err)
	}
}

// Under the failover guard each slot's round runs on a dedicated connection,
// a bounded number at a time. Rounds stuck on a frozen node keep theirs until
// their holds' loss deadlines; with that bound shared by every node, a
// frozen node with guarded holds in more slots than the bound kept a healthy
// node's guarded round from being sent until its hold was lost. The bound is
// per primary.
func TestWatchdogFrozenNodeManyGuardedSlots(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithClusterReplicas(1),
		redistest.WithArgs("--cluster-require-full-coverage", "no"))
	c, err := New(cl.Client(t), sharedPrefix(t), WithFailoverGuard(true, 500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := testCtx(t, 60*time.Second)
	prims := cl.Primaries(t)
	healthy, frozen := prims[0], prims[1]
	// The frozen node's holds have longer leases than the healthy one's, so
	// their stuck rounds (which wait until their loss deadlines) outlast it.
	const lease, every = 3 * time.Second, time.Second
	slots := map[uint16]bool{}
	var frozenCtxs []context.Context
	for i := 0; len(frozenCtxs) < 3*guardedGroups && i < 100000; i++ {
		m := mustMutex(t, c, "frozen-"+strconv.Itoa(i), WithWatchdog(4*lease, every))
		if cl.NodeFor(t, m.Key()) != frozen || slots[keySlot(m.Key())] {
			continue
		}
		slots[keySlot(m.Key())] = true
		l, err := m.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		frozenCtxs = append(frozenCtxs, l)
	}
	var a *Mutex
	for i := range 10000 {
		if m := mustMutex(t, c, "healthy-"+strconv.Itoa(i), WithWatchdog(lease, every)); cl.NodeFor(t, m.Key()) == healthy {
			a = m
			break
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
		t.Fatalf("the guarded hold on a healthy node was lost while another node, with guarded holds in %d slots, was frozen: %v", len(frozenCtxs), context.Cause(actx))
	case <-time.After(3 * lease):
	}
	if err := a.Unlock(actx); err != nil {
		t.Fatal(err)
	}
}
