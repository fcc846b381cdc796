package main

import (
	"slices"
	"strings"
	"testing"
)

// A first seed that refuses the dial (its primary down) while the other
// seeds answer slowly: list reads the layout from the slow ones, lists
// what the reachable primaries hold and names the one it could not read.
// The refused dial has rueidis read the layout again at a random moment;
// each run draws another.
func TestListDeadSeedBeforeSlowSeeds(t *testing.T) {
	t.Parallel()
	cl, d, ctx, prefix, byNode := lockedOnEveryPrimary(t)
	dead := cl.Nodes[0]
	dead.Kill()
	seeds := slowSeeds(t, cl, dead)
	d.url = "redis://" + dead.Addr + "?addr=" + strings.Join(seeds, "&addr=")
	want := heldBesides(prefix, byNode, dead.Addr)
	for i := range 2 {
		r := cli(ctx, d, "", "list", "--json", "--key-prefix", prefix)
		if r.code != exitPartial || !strings.Contains(r.errOut, dead.Addr) {
			t.Fatalf("run %d: list with seed %s down: exit %d, want %d naming it\n%s%s", i, dead.Addr, r.code, exitPartial, r.out, r.errOut)
		}
		if _, got := listedKeys(t, r.out); !slices.Equal(got, want) {
			t.Fatalf("run %d: listed %q, want the reachable primaries' %q", i, got, want)
		}
	}
}
