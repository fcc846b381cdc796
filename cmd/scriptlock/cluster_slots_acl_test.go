package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A user the Cluster refuses CLUSTER SLOTS (and CLUSTER SHARDS), which no
// @read grants, connects to its one seed as to a single node: rueidis takes a
// refusal naming CLUSTER for a server without Cluster support. The command
// reading then one primary as the whole keyspace would list that primary's
// locks alone and exit 0, and inspect a lock on another primary by keys laid
// out for a single node. It refuses, before anything is read, naming what
// to grant.
func TestClusterWithoutClusterSlots(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithArgs("--user", "ops", "on", ">pw", "~*", "&*", "+@read", "+evalsha_ro", "+eval_ro",
		"+time", "+role", "+subscribe", "+unsubscribe", "+pubsub|numsub", "+pubsub|shardnumsub"))
	ctx := testCtx(t, 60*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, cl.Client(t), prefix)
	byNode := map[string]string{}
	for i := 0; len(byNode) < 3; i++ {
		n := "order:" + strconv.Itoa(i)
		if a := cl.NodeFor(t, prefix+n).Addr; byNode[a] == "" {
			byNode[a] = n
			heldMutex(t, ctx, c, n, "w")
		}
	}
	d := deployment{url: "redis://ops:pw@" + cl.Addrs[0]}
	for _, args := range [][]string{{"list"}, {"inspect", byNode[cl.Addrs[1]]}} {
		r := cli(ctx, d, "", append([]string{"--key-prefix", prefix}, args...)...)
		if r.code != exitFailure || !strings.Contains(r.errOut, "+cluster|slots") {
			t.Errorf("%s on a Cluster by a user without CLUSTER SLOTS: exit %d, want %d naming +cluster|slots\n%s%s", args[0], r.code, exitFailure, r.out, r.errOut)
		}
	}
}
