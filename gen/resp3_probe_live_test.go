package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestShapeProbeAgreesWithServer: a script that tests a RESP3 shape field
// of a reply (if not h.map then ... h[i] ... end, s.set or s, h.map ==
// nil) reads it as either protocol hands it to Lua, so it is valid with or
// without redis.setresp(3): the checker must take it, and the server count
// what the key holds both ways.
func TestShapeProbeAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, c := range []rueidis.Completed{
		rc.B().Sadd().Key("{t}s").Member("a", "b").Build(),
		rc.B().Hset().Key("{t}h").FieldValue().FieldValue("owner", "v").FieldValue("n", "1").Build(),
	} {
		if err := rc.Do(ctx, c).Error(); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, key, body string
		want            int64
	}{
		{"not h.map", "{t}h", "local h = redis.call('HGETALL', KEYS[1])\nlocal n = 0\nif not h.map then\n  for i = 1, #h, 2 do if h[i] then n = n + 1 end end\nelse\n  for _ in pairs(h.map) do n = n + 1 end\nend\nreturn n", 2},
		{"h.map", "{t}h", "local h = redis.call('HGETALL', KEYS[1])\nif h.map then\n  local n = 0\n  for _ in pairs(h.map) do n = n + 1 end\n  return n\nend\nreturn #h / 2", 2},
		{"h.map == nil", "{t}h", "local h = redis.call('HGETALL', KEYS[1])\nif h.map == nil then return #h / 2 end\nlocal n = 0\nfor _ in pairs(h.map) do n = n + 1 end\nreturn n", 2},
		{"s.set or s", "{t}s", "local s = redis.call('SMEMBERS', KEYS[1])\nlocal m = s.set or s\nlocal n = 0\nfor _ in pairs(m) do n = n + 1 end\nreturn n", 2},
	} {
		for _, resp := range []string{"", "redis.setresp(3)\n"} {
			t.Run(tc.name+map[string]string{"": " RESP2", "redis.setresp(3)\n": " RESP3"}[resp], func(t *testing.T) {
				src := "-- X counts.\n-- @key k\n-- @return int64\n" + resp + tc.body + "\n"
				if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != "" {
					t.Errorf("checker refused a valid script:\n%s", got)
				}
				n, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key(tc.key).Build()).AsInt64()
				if err != nil || n != tc.want {
					t.Errorf("the server returned %d, %v; want %d", n, err, tc.want)
				}
			})
		}
	}
}
