package main

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/layout"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A Redis 7 Cluster without sharded pub/sub (SPUBLISH renamed away), reached
// by a user without COMMAND: the command picks SPUBLISH from the version, as
// a Client does, and must still release the lock and tell its waiters, with
// PUBLISH, as a Client does once its SPUBLISH is refused.
func TestForceUnlockClusterWithoutShardedPubSub(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithArgs("--user", "ops", "on", ">s3cret", "~*", "&*", "+@all", "-command",
		"--rename-command", "SPUBLISH", "", "--rename-command", "SSUBSCRIBE", "", "--rename-command", "SUNSUBSCRIBE", ""))
	ctx := testCtx(t, 60*time.Second)
	prefix := redistest.Prefix(t)
	d := deployment{name: "cluster", url: "redis://ops:s3cret@" + cl.Addrs[0] + "?addr=" + cl.Addrs[1]}
	rc := cl.Client(t)
	c := newClient(t, rc, prefix)
	m := heldMutex(t, ctx, c, "m", "holder")
	k := layout.For(m.Key(), true)
	sub := subscribeAll(t, ctx, deployment{rc: rc}, k.LockChannel)
	r := cli(ctx, d, "", "force-unlock", "--yes", "--key-prefix", prefix, "m")
	if r.code != exitOK {
		t.Fatalf("force-unlock: exit %d, want %d\n%s%s", r.code, exitOK, r.out, r.errOut)
	}
	if !strings.Contains(r.out, "PUBLISH") {
		t.Errorf("force-unlock told nobody:\n%s", r.out)
	}
	select {
	case <-sub:
	case <-time.After(5 * time.Second):
		t.Errorf("no release message on %s after force-unlock", k.LockChannel)
	}
	if n, err := rc.Do(ctx, rc.B().Exists().Key(k.Lock).Build()).AsInt64(); err != nil || n != 0 {
		t.Errorf("the lock is still there (%d, %v)", n, err)
	}
}
