package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// The primary whose unanswered ROLE made list ask CLUSTER SLOTS is named
// unread with the error its ROLE got, as every other one is: not with the
// answer CLUSTER SLOTS got from another node, which is no error.
func TestListUnreadNamesRoleError(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithArgs("--cluster-require-full-coverage", "no"))
	d := deployment{url: "redis://" + cl.Addrs[0] + "?addr=" + cl.Addrs[1] + "&addr=" + cl.Addrs[2], rc: cl.Client(t)}
	ctx := testCtx(t, 60*time.Second)
	prefix := redistest.Prefix(t)
	first := slices.Min(cl.Addrs)
	for _, n := range cl.Nodes {
		if n.Addr == first {
			n.Kill()
		}
	}
	r := cli(ctx, d, "", "list", "--json", "--key-prefix", prefix)
	var l listing
	if err := json.Unmarshal([]byte(r.out), &l); err != nil {
		t.Fatalf("%v\n%s%s", err, r.out, r.errOut)
	}
	if r.code != exitPartial || len(l.Unread) != 1 || l.Unread[0].Node != first {
		t.Fatalf("list, primary %s down: exit %d, unread %+v; want %d naming it\n%s%s", first, r.code, l.Unread, exitPartial, r.out, r.errOut)
	}
	if e := l.Unread[0].Error; !strings.HasPrefix(e, "ROLE: ") || strings.Contains(e, "%!") || strings.Contains(e, "<nil>") {
		t.Errorf("unread %s: error %q, want the error its ROLE got\n%s", first, e, r.errOut)
	}
}
