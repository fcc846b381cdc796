package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestSetResp2KeepsChecks: redis.setresp(2) switches to the protocol a
// script starts in, so replies keep their RESP2 shapes and the checks of
// returns, comparisons and conditions apply as without it; only
// redis.setresp(3) (or an argument the checker cannot read) leaves them out.
// The server runs the script as RESP2: EXISTS's 0 is true as a condition.
func TestSetResp2KeepsChecks(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, first := range []string{"redis.setresp(2)", "redis.setresp(2.0)"} {
		src := "-- @key k\n-- @arg n int64\n-- @return int64\n" + first + "\n" +
			"if redis.call('EXISTS', KEYS[1]) then return 1 end\n" +
			"if ARGV[1] > 0 then return 2 end\n" +
			"return redis.call('GET', KEYS[1])\n"
		want := []string{
			`scripts/x.lua:5:4: the reply of EXISTS is always true as a condition: it is an integer, and Lua finds 0 true too (only nil and false are false in Lua, and Redis replies nil as false); compare it with a number (== 1, > 0)`,
			`scripts/x.lua:6:12: > compares ARGV[1], a string, with 0, a number, which Lua 5.1 cannot order: Redis fails the script at run time ("attempt to compare ..."); ARGV and KEYS hold strings, whatever the @arg type: compare tonumber(ARGV[1])`,
			`scripts/x.lua:7:8: GET replies a string or nil, but @return int64 needs an integer reply`,
		}
		if got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: checker:\n%s\nwant:\n%s", first, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		n, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}missing").Arg("5").Build()).AsInt64()
		if err != nil || n != 1 {
			t.Errorf("%s: the server returned %d, %v on a missing key; want 1 (EXISTS's 0 is true)", first, n, err)
		}
	}
	// redis.setresp(3), or one the checker cannot read, still leaves them out.
	for _, first := range []string{"redis.setresp(3)", "redis.setresp(tonumber(ARGV[1]))"} {
		src := "-- @key k\n-- @arg n int64\n-- @return int64\n" + first + "\nif redis.call('EXISTS', KEYS[1]) then return 1 end\nreturn tonumber(ARGV[1])\n"
		if got := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}); len(got) != 0 {
			t.Errorf("%s: checker refused: %v", first, got)
		}
	}
}
