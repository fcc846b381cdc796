package main

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// force-unlock --sharded on against a Redis 7 server without SPUBLISH
// (renamed away) fails as a Client forced onto sharded pub/sub
// (WithShardedPubSub(true)) does: before anything changes, with a message
// that names the missing command and the way out (--sharded off or auto).
// It failed with the script's "Invalid command passed to
// redis.acl_check_cmd", which says nothing of either.
func TestForceUnlockShardedOnWithoutSPUBLISH(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t, redistest.WithArgs("--rename-command", "SPUBLISH", ""))
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, node.Client(t), prefix)
	m := heldMutex(t, ctx, c, "m", "holder")
	r := cli(ctx, deployment{url: "redis://" + node.Addr}, "", "--sharded", "on", "force-unlock", "--yes", "--key-prefix", prefix, "m")
	if r.code != exitFailure || !strings.Contains(r.errOut, "SPUBLISH") || !strings.Contains(r.errOut, "--sharded off") ||
		strings.Contains(r.errOut, "acl_check_cmd") {
		t.Errorf("force-unlock --sharded on without SPUBLISH: exit %d, want %d naming the missing SPUBLISH and --sharded off\n%s%s",
			r.code, exitFailure, r.out, r.errOut)
	}
	if n, err := node.Do(t, "EXISTS", m.Key()).AsInt64(); err != nil || n != 1 {
		t.Errorf("the refused force-unlock changed the lock: EXISTS %d, %v", n, err)
	}
}
