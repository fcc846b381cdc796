package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A Cluster primary that stopped answering (a hung host) costs list one
// --timeout, also when it comes first in address order: the nodes asked for
// CLUSTER SLOTS once its ROLE went unanswered are the others.
func TestListHungFirstPrimaryOneTimeout(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithArgs("--cluster-require-full-coverage", "no"))
	d := deployment{url: "redis://" + cl.Addrs[0] + "?addr=" + cl.Addrs[1] + "&addr=" + cl.Addrs[2], rc: cl.Client(t)}
	ctx := testCtx(t, 60*time.Second)
	prefix := redistest.Prefix(t)
	first := slices.Min(cl.Addrs)
	var hung *redistest.Node
	for _, n := range cl.Nodes {
		if n.Addr == first {
			hung = n
		}
	}
	hung.Pause()
	t.Cleanup(hung.Resume)
	const timeout = 3 * time.Second
	start := time.Now()
	r := cli(ctx, d, "", "list", "--timeout", timeout.String(), "--key-prefix", prefix)
	took := time.Since(start)
	if r.code != exitPartial || !strings.Contains(r.errOut, hung.Addr) {
		t.Fatalf("list with primary %s hung: exit %d, want %d naming it\n%s%s", hung.Addr, r.code, exitPartial, r.out, r.errOut)
	}
	// Two timeouts would be 6 s; the rest of the run is a few round trips.
	if took > timeout+timeout*5/6 {
		t.Errorf("list with primary %s hung took %v, want one --timeout (%v) and a few round trips", hung.Addr, took.Round(time.Millisecond), timeout)
	}
}
