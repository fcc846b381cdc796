package main

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/layout"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An ACL user without COMMAND (@connection, which an operator's user often
// lacks) is not told whether the Cluster has sharded pub/sub by COMMAND
// INFO. A Client in that case still picks sharded pub/sub on a Redis 7
// Cluster; the command picks what the servers have, as it does for a user
// allowed COMMAND, instead of failing: inspect, force-unlock and watch work.
func TestClusterWithoutCommandInfo(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithArgs("--user", "ops", "on", ">s3cret", "~*", "&*", "+@all", "-command"))
	ctx := testCtx(t, 60*time.Second)
	prefix := redistest.Prefix(t)
	d := deployment{name: "cluster", url: "redis://ops:s3cret@" + cl.Addrs[0] + "?addr=" + cl.Addrs[1]}
	rc := cl.Client(t)
	c := newClient(t, rc, prefix)
	m := heldMutex(t, ctx, c, "m", "holder")
	k := layout.For(m.Key(), true)
	const waiter = "0a1b2c3d-0000-4000-8000-000000000001:waiting"
	if err := rc.Do(ctx, rc.B().Zadd().Key(k.LockWaiters).ScoreMember().ScoreMember(1, waiter).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	if r := cli(ctx, d, "", "inspect", "--key-prefix", prefix, "m"); r.code != exitOK || !strings.Contains(r.out, "GO WAITERS") {
		t.Errorf("inspect: exit %d, want %d\n%s%s", r.code, exitOK, r.out, r.errOut)
	}
	sub := subscribeAll(t, ctx, deployment{rc: rc}, k.LockChannel)
	r := cli(ctx, d, "", "force-unlock", "--yes", "--key-prefix", prefix, "m")
	if r.code != exitOK || !strings.Contains(r.out, "SPUBLISH") {
		t.Fatalf("force-unlock: exit %d, want %d with SPUBLISH, as a Client on this Cluster publishes\n%s%s", r.code, exitOK, r.out, r.errOut)
	}
	select {
	case <-sub:
	case <-time.After(5 * time.Second):
		t.Errorf("no release message on %s after force-unlock", k.LockChannel)
	}
}
