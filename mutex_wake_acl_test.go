package scriptlock

import (
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/generated"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// On a Cluster with plain pub/sub, a PUBLISH that reaches nobody on the node
// the script runs on says nothing: the waiter's client may listen on another
// node, which the message reaches too. A user the server refuses INFO (an
// ACL without it) is still on a Cluster: the release wakes one waiter and
// leaves the others registered, as when INFO answers.
func TestMutexWakeClusterWithoutInfo(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3)
	for _, n := range cl.Nodes {
		if err := n.Do(t, "ACL", "SETUSER", "default", "-info").Error(); err != nil {
			t.Fatal(err)
		}
	}
	c := newTestClient(t, cl.Client(t), WithShardedPubSub(false))
	m := mustMutex(t, c, "acl")
	ctx := testCtx(t, 20*time.Second)
	node := cl.NodeFor(t, m.waiters)
	var other *redistest.Node
	for _, n := range cl.Primaries(t) {
		if n.Addr != node.Addr {
			other = n
			break
		}
	}
	// Two live waiters of two clients, each listening on a node other than
	// the one the scripts run on.
	clients := []string{"11111111-0000-4000-8000-000000000000", "11111111-0000-4000-8000-000000000001"}
	log := listen(t, other, m.wake+":"+clients[0], m.wake+":"+clients[1])
	register := func() {
		for i, id := range clients {
			if err := node.Do(t, "ZADD", m.waiters, strconv.Itoa(1000+i), id+":1").Error(); err != nil {
				t.Fatal(err)
			}
		}
	}
	check := func(what string) {
		t.Helper()
		if got := log.next(t, 2*time.Second); got != m.wake+":"+clients[0]+" 1000:"+clients[0]+":1" {
			t.Fatalf("%s: message %q, want the first waiter named", what, got)
		}
		log.quiet(t, 200*time.Millisecond)
		if n, _ := node.Do(t, "ZCARD", m.waiters).AsInt64(); n != 1 {
			t.Fatalf("%s: %d waiters left registered, want 1: a live waiter was dropped for a receiver count of one node", what, n)
		}
		if err := node.Do(t, "DEL", m.waiters).Error(); err != nil {
			t.Fatal(err)
		}
	}

	register()
	held, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(held); err != nil {
		t.Fatal(err)
	}
	check("a release")

	register()
	if _, err := generated.MutexWaitCancel(ctx, c.rc, m.key, m.waiters, m.wake, m.latch+":leave", "gone:1", "publish", time.Minute); err != nil {
		t.Fatal(err)
	}
	check("a woken waiter giving up")

	register()
	if err := node.Do(t, "HSET", m.key, "22222222-0000-4000-8000-000000000000:1", "1").Error(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.ForceUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	check("a forced unlock")
}
