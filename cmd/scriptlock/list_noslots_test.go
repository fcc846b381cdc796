package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A Cluster node with no slot assigned names no primary: list fails saying
// so, instead of listing nothing (nothing held) or blaming the cursor.
func TestListClusterWithoutSlots(t *testing.T) {
	t.Parallel()
	n := redistest.Server(t, redistest.WithArgs("--cluster-enabled", "yes"))
	ctx := testCtx(t, 30*time.Second)
	for _, url := range []string{"redis://" + n.Addr, "redis://" + n.Addr + "?addr=" + n.Addr} {
		r := cli(ctx, deployment{url: url}, "", "list", "--json")
		if r.code != exitFailure || !strings.Contains(r.errOut, "no node that serves slots") {
			t.Errorf("list on %s, no slot assigned: exit %d, want %d saying no node serves slots\n%s%s", url, r.code, exitFailure, r.out, r.errOut)
		}
	}
}

// A Cluster client that connected knowing no node (its layout read from no
// node, as when a refused seed's refresh ran before the others answered)
// reads the layout again when list asks for the primaries.
func TestListRelearnsClusterLayout(t *testing.T) {
	t.Parallel()
	n := redistest.Server(t, redistest.WithArgs("--cluster-enabled", "yes"))
	ctx := testCtx(t, 30*time.Second)
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{n.Addr}, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.Close)
	if rc.Mode() != rueidis.ClientModeCluster || len(rc.Nodes()) != 0 {
		t.Fatalf("client on a node with no slot: mode %v, nodes %v; want a Cluster client knowing no node", rc.Mode(), rc.Nodes())
	}
	n.Do(t, "CLUSTER", "ADDSLOTSRANGE", "0", "16383")
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, _ := n.Do(t, "CLUSTER", "INFO").ToString()
		if strings.Contains(info, "cluster_state:ok") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster state not ok after assigning every slot:\n%s", info)
		}
		time.Sleep(20 * time.Millisecond)
	}
	prefix := redistest.Prefix(t)
	heldMutex(t, ctx, newClient(t, n.Client(t), prefix), "order:1", "w")

	e := &env{rc: rc, keyPrefix: prefix, timeout: 5 * time.Second, limit: 100, maxScans: 100, out: &bytes.Buffer{}, errOut: &bytes.Buffer{}}
	l, err := list(ctx, e, prefix, scanCursor{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	var keys []string
	for _, lk := range l.Locks {
		keys = append(keys, lk.Key)
	}
	if want := []string{prefix + "order:1"}; !slices.Equal(keys, want) {
		t.Errorf("listed %q, want %q", keys, want)
	}
}
