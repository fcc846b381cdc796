package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A read-only operator user given reads and scripts (+@read +@scripting)
// lacks TIME, which no @read grants and the inspect script runs to judge
// leases and deadlines by the server's clock. Redis's refusal does not name
// the command; the command's message does, with what to grant. The user
// the documentation gives reads with every command but force-unlock, which
// it refuses before anything changes.
func TestReadOnlyUserTold(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t, redistest.WithArgs("--user", "reader", "on", ">pw", "~*", "&*", "+@read", "+@scripting", "-@write"),
		docsReadOnlyUser(t))
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, node.Client(t), prefix)
	m := heldMutex(t, ctx, c, "order:1", "holder")

	reader := deployment{url: "redis://reader:pw@" + node.Addr}
	for _, args := range [][]string{{"inspect", "order:1"}, {"list"}} {
		r := cli(ctx, reader, "", append([]string{"--key-prefix", prefix}, args...)...)
		if r.code != exitFailure || !strings.Contains(r.errOut, "+time") {
			t.Errorf("%s by a user without TIME: exit %d, want %d and a message naming +time\n%s%s", args[0], r.code, exitFailure, r.out, r.errOut)
		}
	}

	ro := deployment{url: "redis://ops-ro:pw@" + node.Addr}
	for _, args := range [][]string{{"inspect", "order:1"}, {"list"}} {
		if r := cli(ctx, ro, "", append([]string{"--key-prefix", prefix}, args...)...); r.code != exitOK || !strings.Contains(r.out, "order:1") {
			t.Errorf("%s by the documented read-only user: exit %d\n%s%s", args[0], r.code, r.out, r.errOut)
		}
	}
	wctx, stop := context.WithTimeout(ctx, 1500*time.Millisecond)
	r := cli(wctx, ro, "", "--key-prefix", prefix, "watch", "order:1")
	stop()
	if r.code != exitOK || !strings.Contains(r.out, "holder") || r.errOut != "" {
		t.Errorf("watch by the documented read-only user: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	if r := cli(ctx, ro, "", "--key-prefix", prefix, "force-unlock", "--yes", "order:1"); r.code != exitFailure {
		t.Errorf("force-unlock by the read-only user: exit %d, want %d\n%s%s", r.code, exitFailure, r.out, r.errOut)
	}
	if n, err := node.Do(t, "EXISTS", m.Key()).AsInt64(); err != nil || n != 1 {
		t.Errorf("the read-only user's force-unlock changed the lock: EXISTS %d, %v", n, err)
	}
}
