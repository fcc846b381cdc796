package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestResp3LaterIterationAgreesWithServer: redis.setresp(3) in a loop
// (for, while, repeat) holds, at the loop's next iteration, for the calls
// written above it in the body, unless the body itself switches back
// (after it, or above those calls). A local function called in the loop
// that switches to RESP3 does so as one written there. The checker must refuse the return of
// ZRANGE ... WITHSCORES for @return []string exactly where the server
// replies RESP3's pairs in arrays.
func TestResp3LaterIterationAgreesWithServer(t *testing.T) {
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
		{"called above it in a for", "local out\nfor i = 1, 2 do\n  out = " + zrange + "\n  redis.setresp(3)\nend\nreturn out",
			"scripts/x.lua:9:8: returns out, assigned at line 6: the reply of ZRANGE, called after redis.setresp(3) (line 7)" + refused, false},
		{"returned above it in a for", "for i = 1, 2 do\n  if i == 2 then return " + zrange + " end\n  redis.setresp(3)\nend\nreturn {}",
			"scripts/x.lua:5:25: returns the reply of ZRANGE, called after redis.setresp(3) (line 6)" + refused, false},
		{"called above it in a repeat", "local out\nlocal i = 0\nrepeat\n  out = " + zrange + "\n  if i == 0 then redis.setresp(3) end\n  i = i + 1\nuntil i == 2\nreturn out",
			"scripts/x.lua:11:8: returns out, assigned at line 7: the reply of ZRANGE, called after redis.setresp(3) (line 8)" + refused, false},
		{"switched by a local function called below it in a for", "local function sw() redis.setresp(3) end\nlocal out\nfor i = 1, 2 do\n  out = " + zrange + "\n  sw()\nend\nreturn out",
			"scripts/x.lua:10:8: returns out, assigned at line 7: the reply of ZRANGE, called after redis.setresp(3) (line 4)" + refused, false},
		{"switched by a local function called in an if in a while", "local function sw() redis.setresp(3) end\nlocal out\nlocal i = 0\nwhile i < 2 do\n  out = " + zrange + "\n  if i == 0 then sw() end\n  i = i + 1\nend\nreturn out",
			"scripts/x.lua:12:8: returns out, assigned at line 8: the reply of ZRANGE, called after redis.setresp(3) (line 4)" + refused, false},
		{"switched by a local function, switched back below it", "local function sw() redis.setresp(3) end\nlocal out\nfor i = 1, 2 do\n  out = " + zrange + "\n  sw()\n  redis.setresp(2)\nend\nreturn out", "", true},
		{"switched back below it", "local out\nfor i = 1, 2 do\n  out = " + zrange + "\n  redis.setresp(3)\n  redis.call('ZSCORE', KEYS[1], 'a')\n  redis.setresp(2)\nend\nreturn out", "", true},
		{"switched back above the call", "local out\nfor i = 1, 2 do\n  redis.setresp(2)\n  out = " + zrange + "\n  redis.setresp(3)\nend\nredis.setresp(2)\nreturn out", "", true},
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
