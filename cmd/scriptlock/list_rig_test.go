package main

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// lockedOnEveryPrimary starts a three-primary Cluster that keeps serving its
// other slots when a primary fails (no full coverage), a deployment seeded
// with every primary, and holds one Mutex on each primary: byNode maps a
// primary's address to the name of the lock it holds.
func lockedOnEveryPrimary(t *testing.T) (cl *redistest.ClusterT, d deployment, ctx context.Context, prefix string, byNode map[string]string) {
	t.Helper()
	cl = redistest.Cluster(t, 3, redistest.WithArgs("--cluster-require-full-coverage", "no"))
	d = deployment{url: "redis://" + cl.Addrs[0] + "?addr=" + cl.Addrs[1] + "&addr=" + cl.Addrs[2], rc: cl.Client(t)}
	ctx = testCtx(t, 60*time.Second)
	prefix = redistest.Prefix(t)
	c := newClient(t, d.rc, prefix)
	byNode = map[string]string{}
	for i := 0; len(byNode) < 3; i++ {
		n := "order:" + strconv.Itoa(i)
		if a := cl.NodeFor(t, prefix+n).Addr; byNode[a] == "" {
			byNode[a] = n
			heldMutex(t, ctx, c, n, "w")
		}
	}
	return cl, d, ctx, prefix, byNode
}
