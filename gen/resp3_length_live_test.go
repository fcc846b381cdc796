package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestResp3LengthOfSetOrMapAgreesWithServer: after redis.setresp(3), a set
// (SMEMBERS, SINTER, SPOP with a count) or a map (HGETALL) reaches Lua as a
// table {set = ...} or {map = ...} with nothing at 1, 2, ..., so # of it is
// always 0: the checker must refuse it, and the server give 0 for a set
// and a hash that hold values; a list (LRANGE), or the reply of a call made
// before redis.setresp(3), has its length.
func TestResp3LengthOfSetOrMapAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, c := range []rueidis.Completed{
		rc.B().Sadd().Key("{t}s").Member("a", "b").Build(),
		rc.B().Hset().Key("{t}h").FieldValue().FieldValue("f", "v").Build(),
		rc.B().Rpush().Key("{t}l").Element("a", "b").Build(),
	} {
		if err := rc.Do(ctx, c).Error(); err != nil {
			t.Fatal(err)
		}
	}
	const zero = ": its length is always 0; count it with a command (HLEN, SCARD, ...), or call "
	for _, tc := range []struct {
		name, key, body, want string
		n                     int64 // what the server returns
	}{
		{"a set", "{t}s", "redis.setresp(3)\nreturn #redis.call('SMEMBERS', KEYS[1])",
			"scripts/x.lua:5:8: # of the reply of SMEMBERS, which after redis.setresp(3) (line 4) is a set, handed to Lua as a table {set = {...}} with nothing at 1, 2, ..." + zero + "SMEMBERS before redis.setresp(3)", 0},
		{"a map through a local", "{t}h", "redis.setresp(3)\nlocal h = redis.call('HGETALL', KEYS[1])\nreturn #h",
			"scripts/x.lua:6:8: # of h (the reply of HGETALL), which after redis.setresp(3) (line 4) is a map, handed to Lua as a table {map = {...}} with nothing at 1, 2, ..." + zero + "HGETALL before redis.setresp(3)", 0},
		{"a list", "{t}l", "redis.setresp(3)\nreturn #redis.call('LRANGE', KEYS[1], 0, -1)", "", 2},
		{"a set read before", "{t}s", "local m = redis.call('SMEMBERS', KEYS[1])\nredis.setresp(3)\nreturn #m", "", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X counts.\n-- @key k\n-- @return int64\n" + tc.body + "\n"
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.want)
			}
			n, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key(tc.key).Build()).AsInt64()
			if err != nil || n != tc.n {
				t.Errorf("the server returned %d, %v; want %d", n, err, tc.n)
			}
		})
	}
}
