package main

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
)

// A listing that stopped at --limit after a primary went unread prints a
// cursor that carries it: the run continued with it still names that primary
// unread and exits 6, and so does the last run of the listing, which would
// otherwise end it as if complete while that primary's locks were never
// listed.
func TestListCursorAfterPartialStaysPartial(t *testing.T) {
	t.Parallel()
	// One lock on each primary of a Cluster that serves on without one.
	cl, d, ctx, prefix, _ := lockedOnEveryPrimary(t)
	first := slices.Min(cl.Addrs)
	for _, n := range cl.Nodes {
		if n.Addr == first {
			n.Kill()
		}
	}
	r := cli(ctx, d, "", "list", "--json", "--limit", "1", "--key-prefix", prefix)
	var l listing
	if err := json.Unmarshal([]byte(r.out), &l); err != nil {
		t.Fatalf("%v\n%s%s", err, r.out, r.errOut)
	}
	if r.code != exitPartial || l.Cursor == "" {
		t.Fatalf("list --limit 1, primary %s down: exit %d, cursor %q; want %d and a cursor\n%s%s", first, r.code, l.Cursor, exitPartial, r.out, r.errOut)
	}
	for l.Cursor != "" {
		cursor := l.Cursor
		r = cli(ctx, d, "", "list", "--json", "--limit", "1", "--key-prefix", prefix, "--cursor", cursor)
		l = listing{}
		if err := json.Unmarshal([]byte(r.out), &l); err != nil {
			t.Fatalf("%v\n%s%s", err, r.out, r.errOut)
		}
		if r.code != exitPartial || len(l.Unread) != 1 || l.Unread[0].Node != first {
			t.Fatalf("list --cursor %s after a run that left %s unread: exit %d, unread %+v; want %d naming it\n%s%s",
				cursor, first, r.code, l.Unread, exitPartial, r.out, r.errOut)
		}
	}
}

// The unread primaries a cursor carries come before the one it is on, each
// once, in order: any other is no cursor list printed.
func TestListCursorUnreadParse(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"2:0:0123abcd:0", "3:17:0123abcd:0,2"} {
		c, err := parseCursor(s)
		if err != nil || c.String() != s {
			t.Errorf("parseCursor(%q) = %q, %v; want it back", s, c.String(), err)
		}
	}
	for _, s := range []string{"1:0:0123abcd:1", "3:0:0123abcd:2,0", "3:0:0123abcd:1,1", "2:0:0123abcd:", "2:0:0123abcd:-1", "2:0:0123abcd:0:1"} {
		var ee *exitError
		if _, err := parseCursor(s); !errors.As(err, &ee) || ee.code != exitUsage {
			t.Errorf("parseCursor(%q): %v, want a usage error", s, err)
		}
	}
}
