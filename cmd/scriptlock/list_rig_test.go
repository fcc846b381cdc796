package main

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/netproxy"
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

// scannedSecond is the primary of byNode that list scans second: list reads
// the primaries in the order of their addresses.
func scannedSecond(cl *redistest.ClusterT, byNode map[string]string) *redistest.Node {
	addrs := slices.Sorted(maps.Keys(byNode))
	for _, n := range cl.Nodes {
		if n.Addr == addrs[1] {
			return n
		}
	}
	return nil
}

// heldBesides is the sorted keys of the locks byNode holds on the primaries
// other than the one at addr.
func heldBesides(prefix string, byNode map[string]string, addr string) []string {
	var keys []string
	for a, n := range byNode {
		if a != addr {
			keys = append(keys, prefix+n)
		}
	}
	slices.Sort(keys)
	return keys
}

// listedKeys decodes the output of list --json and returns it with the keys
// of the locks it lists, sorted.
func listedKeys(t *testing.T, out string) (listing, []string) {
	t.Helper()
	var l listing
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var keys []string
	for _, lk := range l.Locks {
		keys = append(keys, lk.Key)
	}
	slices.Sort(keys)
	return l, keys
}

// slowSeeds reaches the nodes of cl other than first through links that
// delay everything 500 ms, so that first answers a client's dial before
// them; it returns their addresses.
func slowSeeds(t *testing.T, cl *redistest.ClusterT, first *redistest.Node) []string {
	t.Helper()
	var addrs []string
	for _, n := range cl.Nodes {
		if n != first {
			p := netproxy.New(t, n.Addr)
			p.Delay(500 * time.Millisecond)
			addrs = append(addrs, p.Addr)
		}
	}
	return addrs
}
