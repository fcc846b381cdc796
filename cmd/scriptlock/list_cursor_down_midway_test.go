package main

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A listing continued with a cursor within a primary's SCAN, once that
// primary is down, names it unread without the claim that none of its locks
// is listed: those on the pages read before the cursor were, as when its
// SCAN fails mid-way.
func TestListCursorWithinDownPrimary(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithArgs("--cluster-require-full-coverage", "no"))
	d := deployment{url: "redis://" + cl.Addrs[0] + "?addr=" + cl.Addrs[1] + "&addr=" + cl.Addrs[2], rc: cl.Client(t)}
	ctx := testCtx(t, 60*time.Second)
	prefix := redistest.Prefix(t)
	first := slices.Min(cl.Addrs)
	var dead *redistest.Node
	for _, n := range cl.Nodes {
		if n.Addr == first {
			dead = n
		}
	}
	// Enough keys on the first primary that its SCAN takes more than one page.
	tag := ""
	for i := 0; tag == ""; i++ {
		if s := "{f" + strconv.Itoa(i) + "}"; cl.NodeFor(t, prefix+s).Addr == first {
			tag = s
		}
	}
	mset := []string{"MSET"}
	for i := range 3000 {
		mset = append(mset, prefix+tag+"filler:"+strconv.Itoa(i), "x")
	}
	if err := dead.Do(t, mset...).Error(); err != nil {
		t.Fatal(err)
	}
	// Its one page inspects some 1000 keys in one round trip: on a loaded
	// machine that can take longer than the default --timeout.
	r := cli(ctx, d, "", "list", "--json", "--timeout", "30s", "--max-scans", "1", "--key-prefix", prefix)
	var l listing
	if err := json.Unmarshal([]byte(r.out), &l); err != nil || r.code != exitOK || !strings.HasPrefix(l.Cursor, "0:") || strings.HasPrefix(l.Cursor, "0:0:") {
		t.Fatalf("list --max-scans 1: exit %d, cursor %q, %v; want a cursor within the first primary\n%s%s", r.code, l.Cursor, err, r.out, r.errOut)
	}
	dead.Kill()
	r = cli(ctx, d, "", "list", "--json", "--key-prefix", prefix, "--cursor", l.Cursor)
	l = listing{}
	if err := json.Unmarshal([]byte(r.out), &l); err != nil {
		t.Fatalf("%v\n%s%s", err, r.out, r.errOut)
	}
	if r.code != exitPartial || len(l.Unread) != 1 || l.Unread[0].Node != first {
		t.Fatalf("list --cursor within %s, down: exit %d, unread %+v; want %d naming it\n%s%s", first, r.code, l.Unread, exitPartial, r.out, r.errOut)
	}
	if strings.Contains(r.errOut, "the locks it holds are not listed") || !strings.Contains(l.Unread[0].Error, "listed") {
		t.Errorf("list --cursor within %s, down: unread %+v, and the message says\n%s", first, l.Unread, r.errOut)
	}
}
