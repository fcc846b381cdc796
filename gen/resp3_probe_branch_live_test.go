package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestShapeProbeBranchAgreesWithServer: a test of a RESP3 shape field (if
// h.map then, type(h.map) == 'table', or the rest of a block after if not
// h.map then return end) makes a script valid in either protocol, but the
// branch that runs only when the field is there reads the reply as RESP3
// hands it: #h is 0 and ipairs(h) goes over nothing. After
// redis.setresp(3), the checker must refuse those reads, as the server
// counts nothing there.
func TestShapeProbeBranchAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	if err := rc.Do(ctx, rc.B().Hset().Key("{t}h").FieldValue().FieldValue("a", "1").FieldValue("b", "2").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	const length = ": # of h (the reply of HGETALL), which after redis.setresp(3) (line 4) is a map, handed to Lua as a table {map = {...}} with nothing at 1, 2, ...: its length is always 0; count it with a command (HLEN, SCARD, ...), or call HGETALL before redis.setresp(3)"
	for _, tc := range []struct {
		name, body, want string
		reply            int64
	}{
		{"if h.map then", "if h.map then return #h end\nreturn 5", "scripts/x.lua:6:22" + length, 0},
		{"after if not h.map then return", "if not h.map then return 5 end\nreturn #h", "scripts/x.lua:7:8" + length, 0},
		{"type(h.map) == 'table'", "if type(h.map) == 'table' then\n  return #h\nelse\n  return 5\nend", "scripts/x.lua:7:10" + length, 0},
		{"after if h.map == nil then return", "if h.map == nil then return 5 end\nlocal n = 0\nfor _ in ipairs(h) do n = n + 1 end\nreturn n",
			"scripts/x.lua:8:17: ipairs(h) goes over nothing: after redis.setresp(3) (line 4) HGETALL replies a map, handed to Lua as a table {map = {...}} with nothing else in it; read it as h.map (field = value), or call HGETALL before redis.setresp(3)", 0},
		{"the other branch", "if not h.map then return #h end\nlocal n = 0\nfor _ in pairs(h.map) do n = n + 1 end\nreturn n", "", 2},
		{"else of h.map", "if h.map then\n  local n = 0\n  for _ in pairs(h.map) do n = n + 1 end\n  return n\nelse\n  return #h\nend", "", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X counts.\n-- @key k\n-- @return int64\nredis.setresp(3)\nlocal h = redis.call('HGETALL', KEYS[1])\n" + tc.body + "\n"
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.want)
			}
			n, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}h").Build()).AsInt64()
			if err != nil || n != tc.reply {
				t.Errorf("the server replied %d, %v; want %d", n, err, tc.reply)
			}
		})
	}
}
