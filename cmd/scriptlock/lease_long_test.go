package main

import (
	"strings"
	"testing"
	"time"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// A lock taken with a very long lease (Redisson's lock(Integer.MAX_VALUE,
// MINUTES), some 4,000 years) is shown with that lease, not with the
// negative duration a time.Duration wraps to past 292 years.
func TestInspectLeaseBeyondDuration(t *testing.T) {
	t.Parallel()
	node := redistest.Server(t)
	d := deployment{name: "single", url: "redis://" + node.Addr, rc: node.Client(t)}
	ctx := testCtx(t, 30*time.Second)
	prefix := redistest.Prefix(t)
	key := prefix + "long"
	const minutes = 2147483647
	if err := node.Do(t, "HSET", key, "0a1b2c3d-0000-4000-8000-000000000001:1", "1").Error(); err != nil {
		t.Fatal(err)
	}
	if err := node.Do(t, "PEXPIRE", key, "128849018820000").Error(); err != nil { // minutes in ms
		t.Fatal(err)
	}
	for _, cmd := range []string{"inspect", "list"} {
		args := []string{cmd, "--key-prefix", prefix}
		if cmd == "inspect" {
			args = append(args, "long")
		}
		r := cli(ctx, d, "", args...)
		if r.code != exitOK || regexpLine(r.out, `\s-\d`) || !strings.Contains(r.out, "35791394h") {
			t.Errorf("%s: exit %d, want the lease of %d minutes shown (35791394h...):\n%s%s", cmd, r.code, minutes, r.out, r.errOut)
		}
	}
}
