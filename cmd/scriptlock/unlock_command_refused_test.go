package main

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestForceUnlockPublishCommandRefused: an ACL user allowed every channel
// but not the PUBLISH command was told it may not publish to the lock's
// channel, named, which granting would not change. The refusal says the
// command is refused, and changes nothing.
func TestForceUnlockPublishCommandRefused(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t, redistest.WithArgs(
		"--user", "ops", "on", ">s3cret", "~*", "allchannels", "+@all", "-publish", "-spublish"))
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, node.Client(t), prefix)
	m := heldMutex(t, ctx, c, "cmd", "holder")
	d := deployment{name: "single", url: "redis://ops:s3cret@" + node.Addr}
	r := cli(ctx, d, "", "force-unlock", "--yes", "--sharded", "off", "--key-prefix", prefix, "cmd")
	if r.code != exitFailure || !strings.Contains(r.errOut, "NO_PUBLISH") || strings.Contains(r.errOut, "to channel") ||
		!strings.Contains(r.errOut, "command") {
		t.Errorf("force-unlock by a user refused PUBLISH: exit %d; want %d, NO_PUBLISH saying the command is refused, naming no channel\n%s%s", r.code, exitFailure, r.out, r.errOut)
	}
	if n, err := node.Do(t, "EXISTS", m.Key()).AsInt64(); err != nil || n != 1 {
		t.Errorf("the refused force-unlock changed the lock: EXISTS %d, %v", n, err)
	}
}
