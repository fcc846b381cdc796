package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestResp3ReadOfSetOrMapAgreesWithServer: after redis.setresp(3), a map
// (HGETALL) or a set (SMEMBERS) reaches Lua as a table {map = {...}} or
// {set = {...}}: an index (h[1]), a field other than map or set (h.owner),
// ipairs, which goes over nothing, pairs, which gives the one field map
// or set, unpack, which gives nothing, and table.concat, which gives an
// empty string, all miss what the key holds. The checker must refuse them, and the
// server return what each misses; h.map, and a reply read before
// redis.setresp(3), pass.
func TestResp3ReadOfSetOrMapAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, c := range []rueidis.Completed{
		rc.B().Sadd().Key("{t}s").Member("a").Build(),
		rc.B().Hset().Key("{t}h").FieldValue().FieldValue("owner", "v").Build(),
	} {
		if err := rc.Do(ctx, c).Error(); err != nil {
			t.Fatal(err)
		}
	}
	const count = "local n = 0\nfor _ in ipairs(h) do n = n + 1 end\nreturn tostring(n)"
	for _, tc := range []struct {
		name, key, body, want, got string // got: what the server returns ("" for nil)
	}{
		{"an index of a map", "{t}h", "redis.setresp(3)\nlocal h = redis.call('HGETALL', KEYS[1])\nreturn h[1]",
			"scripts/x.lua:6:8: h[1] is always nil: after redis.setresp(3) (line 4) HGETALL replies a map, handed to Lua as a table {map = {...}} with nothing else in it; read it as h.map (field = value), or call HGETALL before redis.setresp(3)", ""},
		{"a field of a map", "{t}h", "redis.setresp(3)\nlocal h = redis.call('HGETALL', KEYS[1])\nreturn h.owner",
			"scripts/x.lua:6:8: h.owner is always nil: after redis.setresp(3) (line 4) HGETALL replies a map, handed to Lua as a table {map = {...}} with nothing else in it; read it as h.map (field = value), or call HGETALL before redis.setresp(3)", ""},
		{"ipairs of a map", "{t}h", "redis.setresp(3)\nlocal h = redis.call('HGETALL', KEYS[1])\n" + count,
			"scripts/x.lua:7:17: ipairs(h) goes over nothing: after redis.setresp(3) (line 4) HGETALL replies a map, handed to Lua as a table {map = {...}} with nothing else in it; read it as h.map (field = value), or call HGETALL before redis.setresp(3)", "0"},
		{"pairs of a set", "{t}s", "redis.setresp(3)\nfor k in pairs(redis.call('SMEMBERS', KEYS[1])) do return k end\nreturn 'none'",
			"scripts/x.lua:5:16: pairs(redis.call(...)) gives the one field set: after redis.setresp(3) (line 4) SMEMBERS replies a set, handed to Lua as a table {set = {...}} with nothing else in it; read it as redis.call(...).set (member = true), or call SMEMBERS before redis.setresp(3)", "set"},
		{"unpack of a set", "{t}s", "redis.setresp(3)\nlocal m = redis.call('SMEMBERS', KEYS[1])\nreturn tostring(select('#', unpack(m)))",
			"scripts/x.lua:6:36: unpack(m) gives nothing: after redis.setresp(3) (line 4) SMEMBERS replies a set, handed to Lua as a table {set = {...}} with nothing else in it; read it as m.set (member = true), or call SMEMBERS before redis.setresp(3)", "0"},
		{"table.concat of a set", "{t}s", "redis.setresp(3)\nlocal m = redis.call('SMEMBERS', KEYS[1])\nreturn table.concat(m, ',')",
			"scripts/x.lua:6:21: table.concat(m) is always an empty string: after redis.setresp(3) (line 4) SMEMBERS replies a set, handed to Lua as a table {set = {...}} with nothing else in it; read it as m.set (member = true), or call SMEMBERS before redis.setresp(3)", ""},
		{"unpack read before", "{t}s", "local m = redis.call('SMEMBERS', KEYS[1])\nredis.setresp(3)\nreturn table.concat({unpack(m)}, ',')", "", "a"},
		{"the map itself", "{t}h", "redis.setresp(3)\nlocal h = redis.call('HGETALL', KEYS[1])\nreturn h.map.owner", "", "v"},
		{"read before", "{t}h", "local h = redis.call('HGETALL', KEYS[1])\nredis.setresp(3)\nreturn h[1]", "", "owner"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X reads.\n-- @key k\n-- @return string?\n" + tc.body + "\n"
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.want)
			}
			s, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key(tc.key).Build()).ToString()
			if rueidis.IsRedisNil(err) {
				s, err = "", nil
			}
			if err != nil || s != tc.got {
				t.Errorf("the server returned %q, %v; want %q", s, err, tc.got)
			}
		})
	}
}
