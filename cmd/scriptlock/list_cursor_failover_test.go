package main

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A list cursor names a position on one primary. After a failover the
// primaries are other servers (a replica's SCAN cursor is no position on
// it, and the address order that numbered them changed): the cursor is
// refused, saying to start again, rather than resumed on another node,
// which skips or repeats locks.
func TestListCursorAfterFailover(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithClusterReplicas(1))
	d := deployment{url: "redis://" + cl.Addrs[0] + "?addr=" + cl.Addrs[1] + "&addr=" + cl.Addrs[2], rc: cl.Client(t)}
	ctx := testCtx(t, 90*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix)
	seen := map[string]bool{}
	for i := 0; len(seen) < 3; i++ {
		n := "order:" + strconv.Itoa(i)
		if a := cl.NodeFor(t, prefix+n).Addr; !seen[a] {
			seen[a] = true
			heldMutex(t, ctx, c, n, "w")
		}
	}
	// One page, one lock: the cursor names the second primary.
	r := cli(ctx, d, "", "list", "--json", "--limit", "1", "--key-prefix", prefix)
	var l listing
	if err := json.Unmarshal([]byte(r.out), &l); r.code != exitOK || err != nil || l.Cursor == "" {
		t.Fatalf("list --limit 1: exit %d, %v\n%s%s", r.code, err, r.out, r.errOut)
	}
	failOver(t, ctx, cl)
	r = cli(ctx, d, "", "list", "--json", "--key-prefix", prefix, "--cursor", l.Cursor)
	if r.code != exitUsage || !strings.Contains(r.errOut, "primaries") {
		t.Errorf("list --cursor %s after a failover: exit %d, want %d saying the primaries changed\n%s%s", l.Cursor, r.code, exitUsage, r.out, r.errOut)
	}
	// A cursor printed now continues.
	r = cli(ctx, d, "", "list", "--json", "--limit", "1", "--key-prefix", prefix)
	if err := json.Unmarshal([]byte(r.out), &l); r.code != exitOK || err != nil || l.Cursor == "" {
		t.Fatalf("list --limit 1 after the failover: exit %d, %v\n%s%s", r.code, err, r.out, r.errOut)
	}
	keys := []string{l.Locks[0].Key}
	r = cli(ctx, d, "", "list", "--json", "--key-prefix", prefix, "--cursor", l.Cursor)
	if err := json.Unmarshal([]byte(r.out), &l); r.code != exitOK || err != nil {
		t.Fatalf("list --cursor after the failover: exit %d, %v\n%s%s", r.code, err, r.out, r.errOut)
	}
	for _, lk := range l.Locks {
		keys = append(keys, lk.Key)
	}
	slices.Sort(keys)
	if len(keys) != 3 || len(slices.Compact(slices.Clone(keys))) != 3 {
		t.Errorf("listed %q in two runs, want three locks once each", keys)
	}
}

// failOver promotes the replica of one primary (CLUSTER FAILOVER) and waits
// until every node reports the new primaries.
func failOver(t *testing.T, ctx context.Context, cl *redistest.ClusterT) {
	t.Helper()
	before := cl.Primaries(t)
	var replica *redistest.Node
	for _, n := range cl.Nodes {
		if slices.Contains(before, n) {
			continue
		}
		replica = n
		break
	}
	if err := replica.Do(t, "CLUSTER", "FAILOVER").Error(); err != nil {
		t.Fatalf("CLUSTER FAILOVER on %s: %v", replica.Addr, err)
	}
	for {
		if slices.Contains(cl.Primaries(t), replica) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s not promoted", replica.Addr)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
