package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// The read-only operator user docs/operations.md gives reads on a server
// that has not cached the inspect script yet (its first use, a restart, a
// failover to a replica that never ran it): the script is then sent whole,
// EVAL_RO after EVALSHA_RO's NOSCRIPT, which that user must be granted too.
func TestReadOnlyUserFreshServer(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t, docsReadOnlyUser(t))
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, node.Client(t), prefix)
	heldMutex(t, ctx, c, "order:1", "holder")
	ro := deployment{url: "redis://ops-ro:pw@" + node.Addr}
	for _, args := range [][]string{{"inspect", "order:1"}, {"list"}} {
		node.Do(t, "SCRIPT", "FLUSH")
		if r := cli(ctx, ro, "", append([]string{"--key-prefix", prefix}, args...)...); r.code != exitOK || !strings.Contains(r.out, "order:1") {
			t.Errorf("%s by the documented read-only user, the script not cached: exit %d\n%s%s", args[0], r.code, r.out, r.errOut)
		}
	}
}

// docsReadOnlyUser is the read-only operator user docs/operations.md gives
// (ACL SETUSER ops-ro ...), its password pw, as server arguments.
func docsReadOnlyUser(t *testing.T) redistest.Option {
	t.Helper()
	user := redistest.DocACLUser(t, "../../docs/operations.md", "ops-ro", "pw")[2:]
	return redistest.WithArgs(append([]string{"--user"}, user...)...)
}

// The documented read-only user reads a Cluster too: the client learns the
// Cluster's slots with CLUSTER SLOTS (CLUSTER SHARDS from Redis 8), which no
// @read grants, and list finds the primaries to scan with it.
func TestReadOnlyUserCluster(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, docsReadOnlyUser(t))
	ctx := testCtx(t, 60*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, cl.Client(t), prefix)
	heldMutex(t, ctx, c, "order:1", "holder")
	ro := deployment{url: "redis://ops-ro:pw@" + cl.Addrs[0] + "?addr=" + cl.Addrs[1]}
	for _, args := range [][]string{{"inspect", "order:1"}, {"list"}} {
		if r := cli(ctx, ro, "", append([]string{"--key-prefix", prefix}, args...)...); r.code != exitOK || !strings.Contains(r.out, "order:1") {
			t.Errorf("%s on a Cluster by the documented read-only user: exit %d\n%s%s", args[0], r.code, r.out, r.errOut)
		}
	}
	wctx, stop := context.WithTimeout(ctx, 1500*time.Millisecond)
	r := cli(wctx, ro, "", "--key-prefix", prefix, "watch", "order:1")
	stop()
	if r.code != exitOK || !strings.Contains(r.out, "holder") || r.errOut != "" {
		t.Errorf("watch on a Cluster by the documented read-only user: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
}

// The documented read-only user reads through Sentinel too: the client asks
// the primary Sentinel names for its ROLE before it uses it, which no @read
// grants.
func TestReadOnlyUserSentinel(t *testing.T) {
	t.Parallel()
	s := redistest.Sentinel(t, docsReadOnlyUser(t))
	ctx := testCtx(t, 60*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, s.Client(t), prefix)
	heldMutex(t, ctx, c, "order:1", "holder")
	ro := deployment{url: "redis://ops-ro:pw@" + s.Addrs[0] + "?addr=" + strings.Join(s.Addrs[1:], "&addr=") + "&master_set=" + redistest.SentinelMaster}
	for _, args := range [][]string{{"inspect", "order:1"}, {"list"}} {
		if r := cli(ctx, ro, "", append([]string{"--key-prefix", prefix}, args...)...); r.code != exitOK || !strings.Contains(r.out, "order:1") {
			t.Errorf("%s through Sentinel by the documented read-only user: exit %d\n%s%s", args[0], r.code, r.out, r.errOut)
		}
	}
}
