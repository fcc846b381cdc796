package main

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// list never prints a cursor past the last primary (a listing that scanned
// every one prints none): such a cursor, from another deployment or one
// whose primaries are fewer now, is refused (exit 2) rather than answered
// with an empty listing that reads as "no lock held" and ends it.
func TestListCursorPastLastPrimary(t *testing.T) {
	t.Parallel()
	d := singleNode(t)
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix)
	heldMutex(t, ctx, c, "order:1", "w")
	fp := fingerprint([]string{strings.TrimPrefix(d.url, "redis://")}, prefix)
	r := cli(ctx, d, "", "list", "--key-prefix", prefix, "--cursor", "1:0:"+fp)
	if r.code != exitUsage || !strings.Contains(r.errOut, "cursor") {
		t.Errorf("list --cursor 1:0:%s on one primary: exit %d, want %d naming the cursor\n%s%s", fp, r.code, exitUsage, r.out, r.errOut)
	}
	if r := cli(ctx, d, "", "list", "--key-prefix", prefix, "--cursor", "0:0:"+fp); r.code != exitOK || !strings.Contains(r.out, "order:1") {
		t.Errorf("list --cursor 0:0:%s: exit %d\n%s%s", fp, r.code, r.out, r.errOut)
	}
}

// A cursor names the prefix and database it was printed for: a SCAN
// position does not depend on MATCH, so one taken to another --prefix (or
// --key-prefix) ran to the end without that prefix's keys in the buckets
// already read, and said nothing (exit 0, a listing short of locks held).
// It is refused (exit 2), as is one taken to another database.
func TestListCursorOtherPrefix(t *testing.T) {
	t.Parallel()
	d := singleNode(t)
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix)
	heldMutex(t, ctx, c, "b:1", "w")
	addrs := []string{strings.TrimPrefix(d.url, "redis://")}
	for _, other := range []string{prefix + "a:", prefix, "b:"} {
		cursor := "0:0:" + fingerprint(addrs, other)
		r := cli(ctx, d, "", "list", "--key-prefix", prefix, "--prefix", "b:", "--cursor", cursor)
		if r.code != exitUsage || !strings.Contains(r.errOut, "another listing") {
			t.Errorf("list --prefix b: --cursor printed for %q: exit %d, want %d\n%s%s", other, r.code, exitUsage, r.out, r.errOut)
		}
	}
	cursor := "0:0:" + fingerprint(addrs, prefix+"b:")
	if r := cli(ctx, d, "", "list", "--key-prefix", prefix, "--prefix", "b:", "--cursor", cursor); r.code != exitOK || !strings.Contains(r.out, "b:1") {
		t.Errorf("list --prefix b: --cursor %s: exit %d\n%s%s", cursor, r.code, r.out, r.errOut)
	}
	// The same prefix in another database: its keys are others.
	d1 := d
	d1.url += "/1"
	if r := cli(ctx, d1, "", "list", "--key-prefix", prefix, "--prefix", "b:", "--cursor", cursor); r.code != exitUsage || !strings.Contains(r.errOut, "another database") {
		t.Errorf("list on database 1 with a cursor printed for database 0: exit %d, want %d\n%s%s", r.code, exitUsage, r.out, r.errOut)
	}
}
