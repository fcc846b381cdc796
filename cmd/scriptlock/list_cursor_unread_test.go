package main

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A run continued with --cursor on the last primary, which does not
// answer, reads nothing: that is no partial answer but a failure, exit 1,
// as when no primary answers.
func TestListCursorOnUnreadPrimary(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithArgs("--cluster-require-full-coverage", "no"))
	d := deployment{url: "redis://" + cl.Addrs[0] + "?addr=" + cl.Addrs[1] + "&addr=" + cl.Addrs[2], rc: cl.Client(t)}
	ctx := testCtx(t, 60*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix)
	byNode := map[string]string{}
	for i := 0; len(byNode) < 3; i++ {
		n := "order:" + strconv.Itoa(i)
		if a := cl.NodeFor(t, prefix+n).Addr; byNode[a] == "" {
			byNode[a] = n
			heldMutex(t, ctx, c, n, "w")
		}
	}
	addrs := slices.Clone(cl.Addrs)
	slices.Sort(addrs)
	var last *redistest.Node
	for _, n := range cl.Nodes {
		if n.Addr == addrs[2] {
			last = n
		}
	}
	last.Kill()
	cursor := "2:0:" + fingerprint(addrs)
	r := cli(ctx, d, "", "list", "--json", "--key-prefix", prefix, "--cursor", cursor)
	if r.code != exitFailure || !strings.Contains(r.errOut, last.Addr) {
		t.Errorf("list --cursor %s, primary %s down: exit %d, want %d naming it\n%s%s", cursor, last.Addr, r.code, exitFailure, r.out, r.errOut)
	}
	// From the start the others are read: a partial answer.
	if r := cli(ctx, d, "", "list", "--json", "--key-prefix", prefix); r.code != exitPartial {
		t.Errorf("list, primary %s down: exit %d, want %d\n%s%s", last.Addr, r.code, exitPartial, r.out, r.errOut)
	}
}
