package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A run continued with --cursor on the last primary, which does not
// answer, reads nothing: that is no partial answer but a failure, exit 1,
// as when no primary answers.
func TestListCursorOnUnreadPrimary(t *testing.T) {
	t.Parallel()
	// One lock on each primary of a Cluster that serves on without one.
	cl, d, ctx, prefix, _ := lockedOnEveryPrimary(t)
	addrs := slices.Clone(cl.Addrs)
	slices.Sort(addrs)
	var last *redistest.Node
	for _, n := range cl.Nodes {
		if n.Addr == addrs[2] {
			last = n
		}
	}
	last.Kill()
	cursor := "2:0:" + fingerprint(addrs, prefix)
	r := cli(ctx, d, "", "list", "--json", "--key-prefix", prefix, "--cursor", cursor)
	if r.code != exitFailure || !strings.Contains(r.errOut, last.Addr) {
		t.Errorf("list --cursor %s, primary %s down: exit %d, want %d naming it\n%s%s", cursor, last.Addr, r.code, exitFailure, r.out, r.errOut)
	}
	// From the start the others are read: a partial answer.
	if r := cli(ctx, d, "", "list", "--json", "--key-prefix", prefix); r.code != exitPartial {
		t.Errorf("list, primary %s down: exit %d, want %d\n%s%s", last.Addr, r.code, exitPartial, r.out, r.errOut)
	}
}
