package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestShapeProbeTypeAgreesWithServer: a RESP3 shape field tested through
// type (if type(h.map) == 'table' then ... end) reads the reply as either
// protocol hands it to Lua, as if h.map then does: the checker must take
// it, and the server count what the key holds both ways.
func TestShapeProbeTypeAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	if err := rc.Do(ctx, rc.B().Hset().Key("{t}h").FieldValue().FieldValue("owner", "v").FieldValue("n", "1").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{
		"local h = redis.call('HGETALL', KEYS[1])\nif type(h.map) == 'table' then\n  local n = 0\n  for _ in pairs(h.map) do n = n + 1 end\n  return n\nend\nreturn math.floor(#h / 2)",
		"local h = redis.call('HGETALL', KEYS[1])\nlocal n = 0\nif type(h.map) ~= 'table' then\n  for i = 1, #h, 2 do n = n + 1 end\nelse\n  for _ in pairs(h.map) do n = n + 1 end\nend\nreturn n",
	} {
		for _, resp := range []string{"", "redis.setresp(3)\n"} {
			src := "-- X counts.\n-- @key k\n-- @return int64\n" + resp + body + "\n"
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != "" {
				t.Errorf("checker refused a valid script:\n%s\n%s", src, got)
			}
			n, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}h").Build()).AsInt64()
			if err != nil || n != 2 {
				t.Errorf("%s: the server returned %d, %v; want 2", src, n, err)
			}
		}
	}
}
