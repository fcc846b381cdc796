package scriptlock

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRedLockHeldOn: HeldOn tells which nodes hold a RedLock's hold, as the
// process knows it: not a node that answered past the node timeout, not one
// whose hold was lost since, none once it is unlocked; nil for a context of
// no hold of this RedLock.
func TestRedLockHeldOn(t *testing.T) {
	t.Parallel()
	_, cs, pxs := proxiedNodes(t, 5)
	ctx := testCtx(t, 30*time.Second)
	r := mustRedLock(t, "held-on", cs, WithNodeTimeout(300*time.Millisecond))
	if got := r.HeldOn(ctx); got != nil {
		t.Fatalf("HeldOn of a context with no hold = %v, want nil", got)
	}
	// Node 4 answers past the node timeout: the others make the quorum.
	pxs[4].Delay(time.Second)
	lctx := lockHeldOn(t, ctx, r, []bool{true, true, true, true, false})
	pxs[4].Delay(0)
	if got := mustRedLock(t, "held-on", cs).HeldOn(lctx); !slices.Equal(got, []bool{true, true, true, true, false}) {
		t.Fatalf("HeldOn through another handle = %v", got)
	}
	if got := mustRedLock(t, "other", cs).HeldOn(lctx); got != nil {
		t.Fatalf("HeldOn of another RedLock's hold = %v, want nil", got)
	}
	// A re-entry that nodes 3 and 4 do not answer in time stands on nodes
	// 0 to 2: its Unlock gives back those, and the outer hold keeps node 3.
	var nested context.Context
	for try := 1; ; try++ {
		pxs[3].Freeze()
		pxs[4].Freeze()
		var err error
		nested, err = r.TryLock(lctx, 0)
		pxs[3].Thaw()
		pxs[4].Thaw()
		if err == nil {
			break
		}
		// One of nodes 0 to 2 late as well, on a loaded machine.
		if !errors.Is(err, ErrQuorum) || try == 10 {
			t.Fatalf("re-entry with nodes 3 and 4 cut off: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got := r.HeldOn(nested); !slices.Equal(got, []bool{true, true, true, false, false}) {
		t.Fatalf("HeldOn of the re-entry with nodes 3 and 4 cut off = %v, want nodes 0 to 2", got)
	}
	// Made again, as its error says to, when a loaded machine's nodes did
	// not answer within the 300 ms node timeout.
	for try := 0; ; try++ {
		err := r.Unlock(nested)
		if err == nil {
			break
		}
		if try == 4 {
			t.Fatal(err)
		}
	}
	if got := r.HeldOn(lctx); !slices.Equal(got, []bool{true, true, true, true, false}) {
		t.Fatalf("HeldOn of the outer hold after the re-entry's Unlock = %v, want nodes 0 to 3", got)
	}
	owner, _ := OwnerFrom(lctx)
	for i, want := range []int64{1, 1, 1, 1, 0} {
		if !eventually(5*time.Second, func() bool {
			st, err := r.nodes[i].State(WithOwner(ctx, owner))
			return err == nil && st.HoldCount == want
		}) {
			st, err := r.nodes[i].State(WithOwner(ctx, owner))
			t.Fatalf("node %d after the re-entry's Unlock: %+v, %v; want %d holds", i, st, err, want)
		}
	}
	// Node 0's hold is taken away: the hold stands on three nodes.
	loseNode(t, ctx, r, lctx, cs[0], []bool{false, true, true, true, false})
	if err := r.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	if got := r.HeldOn(lctx); !slices.Equal(got, make([]bool, 5)) {
		t.Fatalf("HeldOn after Unlock = %v, want none", got)
	}
}

// TestRedLockHeldOnMultiLockMember: a MultiLock's context answers HeldOn
// for a RedLock among its members, with that member's nodes; nil for a
// RedLock that is not one.
func TestRedLockHeldOnMultiLockMember(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	cs := redlockClients(t, nodes)
	ctx := testCtx(t, 20*time.Second)
	rl := mustRedLock(t, "wallet", cs, roomyNodeTimeout)
	ml := mustMulti(t, []Locker{mustMutex(t, cs[0], "order"), rl})
	lctx, err := ml.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	derived, cancel := context.WithCancel(lctx)
	defer cancel()
	for _, c := range []context.Context{lctx, derived} {
		if got := rl.HeldOn(c); !slices.Equal(got, []bool{true, true, true}) {
			t.Fatalf("HeldOn of the MultiLock's context = %v, want every node", got)
		}
	}
	if got := mustRedLock(t, "other", cs).HeldOn(lctx); got != nil {
		t.Fatalf("HeldOn of a RedLock that is no member = %v, want nil", got)
	}
	// Node 2's hold is taken away: the RedLock, and the MultiLock, stand on
	// the other two.
	loseNode(t, ctx, rl, lctx, cs[2], []bool{true, true, false})
	if err := ml.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	if got := rl.HeldOn(lctx); !slices.Equal(got, make([]bool, 3)) {
		t.Fatalf("HeldOn after the MultiLock's Unlock = %v, want none", got)
	}
}

// loseNode force-unlocks r's lock on c's node and checks that HeldOn of
// lctx comes to want, with lctx alive on the majority left.
func loseNode(t *testing.T, ctx context.Context, r *RedLock, lctx context.Context, c *Client, want []bool) {
	t.Helper()
	if _, err := mustMutex(t, c, r.Name()).ForceUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	if !eventually(5*time.Second, func() bool { return slices.Equal(r.HeldOn(lctx), want) }) {
		t.Fatalf("HeldOn after a node's loss = %v, want %v", r.HeldOn(lctx), want)
	}
	if err := lctx.Err(); err != nil {
		t.Fatalf("lock context ended with the lock on nodes %v: %v", want, context.Cause(lctx))
	}
}
