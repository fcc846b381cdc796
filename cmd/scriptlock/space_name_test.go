package main

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// Two locks whose names differ by a leading or trailing space print
// differently in text output: list pads its columns with spaces, where a
// trailing one would vanish, and an operator copying "order:1" would
// force-unlock the other lock. Such a name is printed in Go's quoted form.
func TestNamesWithEdgeSpacesText(t *testing.T) {
	t.Parallel()
	d := singleNode(t)
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	c := newClient(t, d.rc, prefix)
	for _, name := range []string{"order:1", "order:1 ", " order:1"} {
		heldMutex(t, ctx, c, name, "holder")
	}
	r := cli(ctx, d, "", "list", "--key-prefix", prefix)
	if r.code != exitOK {
		t.Fatalf("list: exit %d\n%s", r.code, r.errOut)
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(r.out), "\n")[1:] {
		l = l[:strings.Index(l, "mutex")] // the key column, padded
		if lines[l] {
			t.Errorf("two locks listed alike, %q:\n%s", l, r.out)
		}
		lines[l] = true
	}
	for _, want := range []string{`"order:1 "`, `" order:1"`} {
		if !strings.Contains(r.out, want) {
			t.Errorf("list does not show %s:\n%s", want, r.out)
		}
	}
	if r := cli(ctx, d, "", "inspect", "--key-prefix", prefix, "order:1 "); !regexpLine(r.out, `^KEY\s+"`+prefix+`order:1 "$`) {
		t.Errorf("inspect of \"order:1 \" does not show the key quoted:\n%s", r.out)
	}
}
