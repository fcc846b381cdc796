package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestVariadicLongAgainstGroups: a command that takes its words in groups
// and one that takes a fixed number of arguments, both getting the same
// variadic list whole on every run (HSET k a b of unpack(ARGV): an even
// count; HGET k of unpack(ARGV): one value), leave no count that succeeds:
// the server fails every run, and the script must be refused, naming both
// lines, not generated with callers that refuse every count.
func TestVariadicLongAgainstGroups(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	src := "-- X does it.\n-- @key h\n-- @arg rest... string\n-- @return none\nredis.call('HSET', KEYS[1], 'a', 'b', unpack(ARGV))\nredis.call('HGET', KEYS[1], unpack(ARGV))\n"
	for _, args := range [][]string{nil, {"f"}, {"f", "v"}, {"f", "v", "g"}} {
		err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}h").Arg(args...).Build()).Error()
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), "wrong number of arg") {
			t.Errorf("%v: the server returned %v, want wrong number of arguments", args, err)
		}
	}
	const want = "HSET (line 5) needs an even count of rest, and HGET (line 6) takes 1 at most"
	if _, err := Generate("generated", []File{{Path: "scripts/x.lua", Source: []byte(src)}}); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("the generator returned %v, want an error holding %q", err, want)
	}
}
