package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestResp3InLocalFunctionAgreesWithServer: redis.setresp(3) in a local
// function switches the protocol when the function runs, not where it is
// written: a reply read before a call of the function, or with the function
// never called, is in RESP2, and one read after a call in RESP3 (unless the
// function switches back before it returns). The checker must refuse the
// return of ZRANGE ... WITHSCORES for @return []string exactly where the
// server replies RESP3's pairs in arrays.
func TestResp3InLocalFunctionAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	if err := rc.Do(ctx, rc.B().Zadd().Key("{t}z").ScoreMember().ScoreMember(1, "a").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	const fn = "local function r3()\n  redis.setresp(3)\nend\n"
	const zrange = "redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')"
	for _, tc := range []struct {
		name, body, want string
		flat             bool // whether the server replies a flat array
	}{
		{"never called", fn + "return " + zrange, "", true},
		{"called after the call", fn + "local z = " + zrange + "\nr3()\nreturn z", "", true},
		{"called before the call", fn + "r3()\nreturn " + zrange,
			"scripts/x.lua:8:8: returns the reply of ZRANGE, called after redis.setresp(3) (line 5): it is then an array of doubles or of arrays (scores as doubles, pairs in arrays of two), not a flat array of strings, which @return []string does not read (the callers get a *DecodeError, or values are lost); call ZRANGE before redis.setresp(3), or build the reply in the script", false},
		{"switched back in the function", "local function score()\n  redis.setresp(3)\n  local s = redis.call('ZSCORE', KEYS[1], 'a')\n  redis.setresp(2)\n  return s\nend\nscore()\nreturn " + zrange, "", true},
		{"passed as a value", fn + "pcall(r3)\nreturn " + zrange,
			"scripts/x.lua:8:8: returns the reply of ZRANGE, called after redis.setresp(3) (line 5): it is then an array of doubles or of arrays (scores as doubles, pairs in arrays of two), not a flat array of strings, which @return []string does not read (the callers get a *DecodeError, or values are lost); call ZRANGE before redis.setresp(3), or build the reply in the script", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X lists.\n-- @key k\n-- @return []string\n" + tc.body + "\n"
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.want)
			}
			vals, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}z").Build()).ToArray()
			if err != nil || len(vals) == 0 {
				t.Fatalf("the server replied %v, %v", vals, err)
			}
			if flat := vals[0].IsString(); flat != tc.flat {
				t.Errorf("the server replied %v; want a flat array: %v", vals, tc.flat)
			}
		})
	}
}

// TestResp3InLocalFunctionBody: after redis.setresp(3) in a local function,
// the replies the function reads below it are in RESP3, whether or not the
// function is called before its definition ends.
func TestResp3InLocalFunctionBody(t *testing.T) {
	src := "-- X counts.\n-- @key k\n-- @return int64\nlocal function n()\n  redis.setresp(3)\n  return #redis.call('HGETALL', KEYS[1])\nend\nreturn n()\n"
	want := "scripts/x.lua:6:10: # of the reply of HGETALL, which after redis.setresp(3) (line 5) is a map, handed to Lua as a table {map = {...}} with nothing at 1, 2, ...: its length is always 0; count it with a command (HLEN, SCARD, ...), or call HGETALL before redis.setresp(3)"
	if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != want {
		t.Errorf("checker:\n%s\nwant:\n%s", got, want)
	}
}

// TestResp3SwitchedBackInABlockAgreesWithServer: redis.setresp(2) in an if
// (or a loop) switches back only when it runs: after the block the protocol
// may still be RESP3, unless redis.setresp(3) was called in that block too;
// inside the block, below it, it is RESP2. So with a call of a function
// that switches back (or to RESP3). The checker must refuse the
// return of ZRANGE ... WITHSCORES for @return []string exactly where the
// server may reply RESP3's pairs in arrays (here with the condition false).
func TestResp3SwitchedBackInABlockAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	if err := rc.Do(ctx, rc.B().Zadd().Key("{t}z").ScoreMember().ScoreMember(1, "a").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	const zrange = "redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')"
	const refused = ": it is then an array of doubles or of arrays (scores as doubles, pairs in arrays of two), not a flat array of strings, which @return []string does not read (the callers get a *DecodeError, or values are lost); call ZRANGE before redis.setresp(3), or build the reply in the script"
	for _, tc := range []struct {
		name, body, want string
		flat             bool // whether the server replies a flat array
	}{
		{"switched back in an if", "redis.setresp(3)\nif ARGV[1] == 'y' then\n  redis.setresp(2)\nend\nreturn " + zrange,
			"scripts/x.lua:9:8: returns the reply of ZRANGE, called after redis.setresp(3) (line 5)" + refused, false},
		{"switched back in a loop", "redis.setresp(3)\nfor i = 2, #ARGV do\n  redis.setresp(2)\nend\nreturn " + zrange,
			"scripts/x.lua:9:8: returns the reply of ZRANGE, called after redis.setresp(3) (line 5)" + refused, false},
		{"switched back in an elseif", "redis.setresp(3)\nif ARGV[1] == 'y' then\n  redis.call('ZSCORE', KEYS[1], 'a')\nelseif ARGV[1] == 'z' then\n  redis.setresp(2)\nend\nreturn " + zrange,
			"scripts/x.lua:11:8: returns the reply of ZRANGE, called after redis.setresp(3) (line 5)" + refused, false},
		{"switched back in a repeat", "redis.setresp(3)\nrepeat\n  redis.setresp(2)\nuntil ARGV[1] ~= ''\nreturn " + zrange, "", true},
		{"switched and back in an if", "if ARGV[1] == 'n' then\n  redis.setresp(3)\n  redis.call('ZSCORE', KEYS[1], 'a')\n  redis.setresp(2)\nend\nreturn " + zrange, "", true},
		{"returned in the if", "redis.setresp(3)\nif ARGV[1] == 'n' then\n  redis.setresp(2)\n  return " + zrange + "\nend\nreturn {}", "", true},
		{"switched back by a function called in an if", "redis.setresp(3)\nlocal function back()\n  redis.setresp(2)\nend\nif ARGV[1] == 'y' then\n  back()\nend\nreturn " + zrange,
			"scripts/x.lua:12:8: returns the reply of ZRANGE, called after redis.setresp(3) (line 5)" + refused, false},
		{"switched and back by functions called in an if", "local function r3() redis.setresp(3) end\nlocal function back() redis.setresp(2) end\nif ARGV[1] == 'y' then\n  r3()\n  redis.call('ZSCORE', KEYS[1], 'a')\n  back()\nend\nreturn " + zrange, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X lists.\n-- @key k\n-- @arg a string\n-- @return []string\n" + tc.body + "\n"
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.want)
			}
			vals, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}z").Arg("n").Build()).ToArray()
			if err != nil || len(vals) == 0 {
				t.Fatalf("the server replied %v, %v", vals, err)
			}
			if flat := vals[0].IsString(); flat != tc.flat {
				t.Errorf("the server replied %v; want a flat array: %v", vals, tc.flat)
			}
		})
	}
}
