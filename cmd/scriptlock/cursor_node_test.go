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
	fp := fingerprint([]string{strings.TrimPrefix(d.url, "redis://")})
	r := cli(ctx, d, "", "list", "--key-prefix", prefix, "--cursor", "1:0:"+fp)
	if r.code != exitUsage || !strings.Contains(r.errOut, "cursor") {
		t.Errorf("list --cursor 1:0:%s on one primary: exit %d, want %d naming the cursor\n%s%s", fp, r.code, exitUsage, r.out, r.errOut)
	}
	if r := cli(ctx, d, "", "list", "--key-prefix", prefix, "--cursor", "0:0:"+fp); r.code != exitOK || !strings.Contains(r.out, "order:1") {
		t.Errorf("list --cursor 0:0:%s: exit %d\n%s%s", fp, r.code, r.out, r.errOut)
	}
}
