package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/layout"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An operator user granted the locks' names only (~app:*) is refused the
// keys a lock keeps beside its own, which the inspection reads too and whose
// names do not begin with the lock's. Redis's refusal names no key; the
// command's message names them, so that the user can be granted them.
func TestKeysRefusedNamed(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t, redistest.WithArgs("--user", "ops", "on", ">pw", "~app:*", "&*", "+@all"))
	ctx := testCtx(t, 30*time.Second)
	c := newClient(t, node.Client(t), "app:")
	heldMutex(t, ctx, c, "order:1", "holder")
	d := deployment{url: "redis://ops:pw@" + node.Addr}
	k := layout.For("app:order:1", false)
	for _, args := range [][]string{{"inspect", "order:1"}, {"list"}} {
		r := cli(ctx, d, "", append([]string{"--key-prefix", "app:"}, args...)...)
		if r.code != exitFailure || !strings.Contains(r.errOut, strconv.Quote(k.Fence)) || !strings.Contains(r.errOut, strconv.Quote(k.FairQueue)) {
			t.Errorf("%s by a user granted ~app:* only: exit %d, want %d and the keys beside the lock named (%s, %s, ...)\n%s%s",
				args[0], r.code, exitFailure, k.Fence, k.FairQueue, r.out, r.errOut)
		}
	}
}
