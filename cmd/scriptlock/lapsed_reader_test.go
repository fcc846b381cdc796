package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock"
	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A read hold taken with a lease and left to it (no RUnlock: the lease is
// the release) while another reader keeps the lock: its field stays in the
// hash until the lock ends, but none of its lease keys is left, and it holds
// nothing. inspect and list counted it as a holder with its hold, and watch
// named it among those holding the lock.
func TestLapsedReaderIsNoHolder(t *testing.T) {
	t.Parallel()
	d := singleNode(t)
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix)
	rw := mustRW(t, c, "rw")
	if _, err := rw.RLockWithLease(scriptlock.WithOwner(ctx, "reader"), 20*time.Second); err != nil {
		t.Fatal(err)
	}
	const lease = 300 * time.Millisecond
	h, err := rw.RLockWithLease(scriptlock.WithOwner(ctx, "lapsed"), lease)
	if err != nil {
		t.Fatal(err)
	}
	<-h.Done()
	time.Sleep(lease) // past the lease on the server too
	if n, err := d.rc.Do(ctx, d.rc.B().Hexists().Key(prefix+"rw").Field(c.ID()+":lapsed").Build()).AsInt64(); err != nil || n != 1 {
		t.Fatalf("the lapsed reader's field: %d, %v; want it kept until the lock ends", n, err)
	}
	r := inspectJSON(t, ctx, d, prefix, "rw")
	if r.Kind != kindRW || r.HolderCount != 1 || len(r.Holders) != 1 || r.Holders[0].Owner != "reader" {
		t.Errorf("inspect: kind %s, %d holders %+v; want one, the reader whose lease runs", r.Kind, r.HolderCount, r.Holders)
	}
	if len(r.Lapsed) != 1 || r.Lapsed[0].Owner != "lapsed" {
		t.Errorf("inspect: lapsed readers %+v; want the one whose lease ran out", r.Lapsed)
	}
	out := cli(ctx, d, "", "--key-prefix", prefix, "inspect", "rw")
	if out.code != exitOK || !strings.Contains(out.out, "LAPSED READERS") || strings.Contains(out.out, " lapsed ") {
		t.Errorf("inspect: exit %d\n%s%s", out.code, out.out, out.errOut)
	}
	out = cli(ctx, d, "", "--key-prefix", prefix, "list")
	if fields := strings.Fields(lineOf(out.out, "rw ")); out.code != exitOK || len(fields) < 4 || fields[2] != "1" || fields[3] != "1" {
		t.Errorf("list: exit %d, want 1 holder with 1 hold\n%s%s", out.code, out.out, out.errOut)
	}
	wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	out = cli(wctx, d, "", "--key-prefix", prefix, "watch", "rw")
	if strings.Contains(out.out, ":lapsed") || !strings.Contains(out.out, ":reader") {
		t.Errorf("watch names the lapsed reader among the holders, or not the reader:\n%s%s", out.out, out.errOut)
	}
}

// lineOf is the first line of s that begins with prefix, or "".
func lineOf(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
