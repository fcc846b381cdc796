package main

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// The command list prints to continue lists the same keys: it keeps the
// key prefix and the prefix, quoted for the shell.
func TestListContinuationKeepsPrefixes(t *testing.T) {
	t.Parallel()
	d := deployments(t)[1] // a cluster: a page per primary
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t) + "app 1:"
	c := newClient(t, d.rc, prefix)
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
		heldMutex(t, ctx, c, "order *"+n, "w")
	}
	r := cli(ctx, d, "", "list", "--key-prefix", prefix, "--prefix", "order *", "--limit", "1")
	i := strings.Index(r.out, "more: ")
	if r.code != exitOK || i < 0 {
		t.Fatalf("exit %d, no continuation:\n%s%s", r.code, r.out, r.errOut)
	}
	more := strings.TrimSpace(r.out[i+len("more: "):])
	for _, want := range []string{"--key-prefix '" + prefix + "'", "--prefix 'order *'"} {
		if !strings.Contains(more, want) {
			t.Errorf("continuation %q lacks %q", more, want)
		}
	}
}
