package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestUntracedNumberArgAgreesWithServer: an int64 argument the script reads
// as a Lua number where the checker cannot follow ARGV[n] (select over
// unpack(ARGV)) loses digits beyond 2^53 on
// the server, so the generated caller must refuse it before sending.
func TestUntracedNumberArgAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const src = "-- Add adds to a counter.\n-- @key counter\n-- @arg by int64\n-- @return int64\n" +
		"local by = select(1, unpack(ARGV))\nreturn redis.call('INCRBY', KEYS[1], by + 0)\n"
	out, err := Generate("generated", []File{{Path: "scripts/add.lua", Source: []byte(src)}})
	if err != nil {
		t.Fatal(err)
	}
	if code := string(out["add.lua.go"]); !strings.Contains(code, `checkNumbers("Add", "by", by)`) {
		t.Errorf("Add does not refuse a value beyond ±2^53 before sending:\n%s", code)
	}
	n, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}c").Arg("9007199254740993").Build()).AsInt64()
	if err != nil {
		t.Fatal(err)
	}
	if n == 9007199254740993 {
		t.Errorf("the server added 2^53 + 1 exactly; the script keeps the digits")
	}
}
