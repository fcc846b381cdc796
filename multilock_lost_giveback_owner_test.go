package scriptlock

import (
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A lost MultiLock's give-back of a RedLock member goes on through every
// node's Client: Close of each of them waits for it. It was owned by the
// RedLock's first Client alone, so Close of another node's Client returned
// while the give-back still went on through it, the node still held.
func TestMultiLockLostGiveBackWaitedForByEveryNodesClient(t *testing.T) {
	t.Parallel()
	nodes := redistest.Servers(t, 3)
	px := netproxy.New(t, nodes[2].Addr)
	prefix := sharedPrefix(t)
	cs := []*Client{
		newTestClient(t, nodes[0].Client(t), prefix),
		newTestClient(t, nodes[1].Client(t), prefix),
		newTestClient(t, px.Client(t), prefix),
	}
	ctx := testCtx(t, 30*time.Second)
	r := mustRedLock(t, "lg-job", cs, WithNodeTimeout(2*time.Second))
	y := mustMutex(t, cs[0], "lg-y")
	warm(t, y)
	ml := mustMulti(t, []Locker{y, r})
	lctx, err := ml.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Node 2 stops answering; releasing member y through its own handle
	// loses the MultiLock, and the give-back of r then hangs on node 2.
	px.Freeze()
	defer px.Thaw()
	if err := y.Unlock(lctx); err != nil {
		t.Fatalf("Unlock of member y through its own handle: %v", err)
	}
	select {
	case <-lctx.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("MultiLock context alive after member y was released")
	}
	time.Sleep(100 * time.Millisecond) // the give-back is under way
	time.AfterFunc(300*time.Millisecond, px.Thaw)
	if err := cs[2].Close(); err != nil {
		t.Fatal(err)
	}
	if n, err := nodes[2].Do(t, "EXISTS", r.nodes[2].Key()).AsInt64(); err != nil || n != 0 {
		t.Fatalf("RedLock member held on node 2 (%d, %v) once its Client's Close returned: the give-back through it went on past Close", n, err)
	}
}
