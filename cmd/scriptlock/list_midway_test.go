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

// A Cluster primary that fails mid-way through its SCAN, after pages whose
// locks were listed, is named unread without the claim that none of its
// locks is listed: those of the pages read before are.
func TestListPrimaryFailsMidScan(t *testing.T) {
	t.Parallel()
	cl := redistest.Cluster(t, 3, redistest.WithArgs("--cluster-require-full-coverage", "no"))
	d := deployment{url: "redis://" + cl.Addrs[0] + "?addr=" + cl.Addrs[1] + "&addr=" + cl.Addrs[2], rc: cl.Client(t)}
	ctx := testCtx(t, 60*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix)
	addrs := slices.Clone(cl.Addrs)
	slices.Sort(addrs)
	var mid *redistest.Node
	for _, n := range cl.Nodes {
		if n.Addr == addrs[1] {
			mid = n
		}
	}
	// Locks on the primary scanned second, among enough other keys there
	// that its SCAN takes more than one page.
	var names []string
	for i := 0; len(names) < 40; i++ {
		if n := "order:" + strconv.Itoa(i); cl.NodeFor(t, prefix+n).Addr == mid.Addr {
			names = append(names, n)
			heldMutex(t, ctx, c, n, "w")
		}
	}
	tag := ""
	for i := 0; tag == ""; i++ {
		if s := "{f" + strconv.Itoa(i) + "}"; cl.NodeFor(t, prefix+s).Addr == mid.Addr {
			tag = s
		}
	}
	mset := []string{"MSET"}
	for i := range 3000 {
		mset = append(mset, prefix+tag+"filler:"+strconv.Itoa(i), "x")
	}
	if err := mid.Do(t, mset...).Error(); err != nil {
		t.Fatal(err)
	}
	pages := 0
	afterScanPage.Store(prefix, func(node int, _ uint64) {
		if node == 1 {
			if pages++; pages == 2 {
				mid.Kill()
			}
		}
	})
	t.Cleanup(func() { afterScanPage.Delete(prefix) })
	// A timeout a loaded machine's pages of 1000 keys meet (at 2 s the
	// first one did not); the killed primary refuses at once.
	r := cli(ctx, d, "", "list", "--json", "--limit", "1000", "--timeout", "10s", "--key-prefix", prefix)
	if pages < 2 {
		t.Fatalf("the primary's SCAN took %d pages, want 2 or more\n%s", pages, r.errOut)
	}
	if r.code != exitPartial || !strings.Contains(r.errOut, mid.Addr) {
		t.Fatalf("list with primary %s failing mid-way: exit %d, want %d naming it\n%s", mid.Addr, r.code, exitPartial, r.errOut)
	}
	var l listing
	if err := json.Unmarshal([]byte(r.out), &l); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	listed := 0
	for _, lk := range l.Locks {
		if slices.Contains(names, strings.TrimPrefix(lk.Key, prefix)) {
			listed++
		}
	}
	if listed == 0 {
		t.Fatalf("none of the %d locks on %s listed from its first SCAN page", len(names), mid.Addr)
	}
	if strings.Contains(r.errOut, "the locks it holds are not listed") || len(l.Unread) != 1 || !strings.Contains(l.Unread[0].Error, "listed") {
		t.Errorf("%d of its locks listed, but unread %+v and the message says\n%s", listed, l.Unread, r.errOut)
	}
}
