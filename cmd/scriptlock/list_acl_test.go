package main

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// An operator's ACL user without @dangerous (ROLE is @admin and
// @dangerous) still lists the locks: on a single node and on every primary
// of a Cluster, each lock once, none read twice from a replica.
func TestListWithoutRole(t *testing.T) {
	t.Parallel()
	user := redistest.WithArgs("--user", "ops", "on", ">s3cret", "~*", "&*", "+@all", "-@dangerous")
	node := redistest.Server(t, user)
	cl := redistest.Cluster(t, 3, user, redistest.WithClusterReplicas(1))
	for _, d := range []struct {
		name, url string
		admin     deployment
	}{
		{"single", "redis://ops:s3cret@" + node.Addr, deployment{rc: node.Client(t)}},
		{"cluster", "redis://ops:s3cret@" + cl.Addrs[0] + "?addr=" + cl.Addrs[1], deployment{rc: cl.Client(t)}},
	} {
		t.Run(d.name, func(t *testing.T) {
			ctx := testCtx(t, 60*time.Second)
			prefix := redistest.Prefix(t)
			c := newClient(t, d.admin.rc, prefix)
			names := []string{"a", "b", "c", "d", "e", "f"}
			for _, n := range names {
				heldMutex(t, ctx, c, n, "holder")
			}
			r := cli(ctx, deployment{url: d.url}, "", "list", "--key-prefix", prefix)
			if r.code != exitOK {
				t.Fatalf("list: exit %d\n%s%s", r.code, r.out, r.errOut)
			}
			for _, n := range names {
				if got := strings.Count(r.out, "\n"+n+" "); got != 1 {
					t.Errorf("lock %s listed %d times, want once:\n%s", n, got, r.out)
				}
			}
		})
	}
}
