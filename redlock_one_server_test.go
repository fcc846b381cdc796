package scriptlock

import (
	"errors"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestRedLockRefusesNodesOnOneServer: a RedLock whose Clients (each with a
// rueidis client of its own) reach one Redis server holds no majority of
// anything. Its Lock is refused with ErrInvalidArgument, naming the nodes,
// and leaves nothing written (what the nodes granted alongside the check is
// given back); where the Clients' key prefixes differed, every node granted
// and the lock was taken on the one server, as if on three.
func TestRedLockRefusesNodesOnOneServer(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 2)
	one := nodes[0]
	prefix := redistest.Prefix(t)
	cs := []*Client{
		newTestClient(t, one.Client(t), WithKeyPrefix(prefix+"a:")),
		newTestClient(t, nodes[1].Client(t), WithKeyPrefix(prefix+"b:")),
		newTestClient(t, one.Client(t), WithKeyPrefix(prefix+"c:")),
	}
	r, err := NewRedLock("one", cs, roomyNodeTimeout)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t, 10*time.Second)
	lctx, err := r.TryLock(ctx, 0)
	if err == nil {
		r.Unlock(lctx)
		t.Fatal("RedLock over two Clients of one server (of three) took the lock")
	}
	if !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("TryLock returned %v, want ErrInvalidArgument", err)
	}
	t.Log(err)
	if _, err := r.Lock(ctx); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Lock again returned %v, want ErrInvalidArgument", err)
	}
	for i, n := range []*redistest.Node{one, nodes[1], one} {
		if k, err := n.Do(t, "EXISTS", r.nodes[i].Key()).AsInt64(); err != nil || k != 0 {
			t.Fatalf("node %d: the lock key exists (%d, %v)", i, k, err)
		}
	}
	// Independent servers: taken.
	more := redistest.Servers(t, 1)
	cs[2] = newTestClient(t, more[0].Client(t), WithKeyPrefix(prefix+"c:"))
	if r, err = NewRedLock("one", cs, roomyNodeTimeout); err != nil {
		t.Fatal(err)
	}
	lctx, err = r.TryLock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
}
