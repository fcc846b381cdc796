package main

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/layout"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An ACL user that may not publish a message the release sends (Redis 7
// gives a new user no channel; a user may have the lock channel and not
// the Go waiters' wake channels) is refused force-unlock before anything
// changes: the lock was deleted and the command failed with NOPERM, its
// waiters never told, the operator told nothing was done.
func TestForceUnlockWithoutChannelPermission(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t, redistest.WithArgs(
		"--user", "ops", "on", ">s3cret", "~*", "resetchannels", "+@all",
		"--user", "ops2", "on", ">s3cret", "~*", "resetchannels", "&redisson_lock__channel:*", "+@all"))
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, node.Client(t), prefix)
	for _, user := range []string{"ops", "ops2"} {
		m := heldMutex(t, ctx, c, user, "holder")
		k := layout.For(m.Key(), false)
		// The first channel refused: ops has none, ops2 the lock channel only.
		refused := map[string]string{"ops": k.LockChannel, "ops2": k.LockWake + ":"}
		const waiter = "0a1b2c3d-0000-4000-8000-000000000001:waiting"
		if err := node.Do(t, "ZADD", k.LockWaiters, "1", waiter).Error(); err != nil {
			t.Fatal(err)
		}
		d := deployment{name: "single", url: "redis://" + user + ":s3cret@" + node.Addr}
		r := cli(ctx, d, "", "force-unlock", "--yes", "--key-prefix", prefix, user)
		lock, err := node.Do(t, "EXISTS", m.Key()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		waiters, err := node.Do(t, "ZCARD", k.LockWaiters).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		if r.code != exitFailure || lock != 1 || waiters != 1 || !strings.Contains(r.errOut, "nothing changed") ||
			!strings.Contains(r.errOut, "NO_PUBLISH") || !strings.Contains(r.errOut, "channel "+refused[user]) {
			t.Errorf("%s: force-unlock without the right to tell the waiters: exit %d, lock exists %d, Go waiters %d; want exit %d, lock and waiter left alone, \"nothing changed\", NO_PUBLISH naming the channel refused\n%s%s",
				user, r.code, lock, waiters, exitFailure, r.out, r.errOut)
		}
	}
}
