package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestResp3FalseAgreesWithServer: after redis.setresp(3), a nil reply
// reaches Lua as nil, not false, so comparing it with false never holds:
// the checker must refuse it, and the server take the other branch on a
// missing key; not v, and a call before redis.setresp(3), see the nil.
func TestResp3FalseAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, body, want string
		missing          int64 // what the script returns on a missing key
	}{
		{"== false", "redis.setresp(3)\nif redis.call('GET', KEYS[1]) == false then return 1 end\nreturn 0",
			"scripts/x.lua:4:31: == compares the reply of GET with false, which after redis.setresp(3) (line 3) it never is: RESP3 hands a nil reply to Lua as nil, not false, so the comparison is always false; test it with not (if not v then ...), or compare it with nil", 0},
		{"~= false through a local", "redis.setresp(3)\nlocal v = redis.call('HGET', KEYS[1], 'f')\nif v ~= false then return 1 end\nreturn 0",
			"scripts/x.lua:5:6: ~= compares v (the reply of HGET) with false, which after redis.setresp(3) (line 3) it never is: RESP3 hands a nil reply to Lua as nil, not false, so the comparison is always true; test it with not (if not v then ...), or compare it with nil", 1},
		{"not", "redis.setresp(3)\nif not redis.call('GET', KEYS[1]) then return 1 end\nreturn 0", "", 1},
		{"before redis.setresp(3)", "local v = redis.call('GET', KEYS[1])\nredis.setresp(3)\nif v == false then return 1 end\nreturn 0", "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @return int64\n" + tc.body + "\n"
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.want)
			}
			n, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}missing").Build()).AsInt64()
			if err != nil || n != tc.missing {
				t.Errorf("the server returned %d, %v on a missing key; want %d", n, err, tc.missing)
			}
		})
	}
}
