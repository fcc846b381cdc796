package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestResp3EarlyReturnAgreesWithServer: a local function that switches back
// with redis.setresp(2) as its last call of it may return above that call
// (if c then return end), leaving RESP3 in effect after its call. The
// checker must refuse the return of ZRANGE ... WITHSCORES for @return
// []string after such a call, exactly where the server replies RESP3's
// pairs in arrays (here with the key present, so the function returns
// early).
func TestResp3EarlyReturnAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	if err := rc.Do(ctx, rc.B().Zadd().Key("{t}z").ScoreMember().ScoreMember(1, "a").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	const zrange = "redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')"
	const exists = "redis.call('EXISTS', KEYS[1]) == 1"
	const refused = ": it is then an array of doubles or of arrays (scores as doubles, pairs in arrays of two), not a flat array of strings, which @return []string does not read (the callers get a *DecodeError, or values are lost); call ZRANGE before redis.setresp(3), or build the reply in the script"
	for _, tc := range []struct {
		name, body, want string
		flat             bool // whether the server replies a flat array
	}{
		{"returned in RESP3 above the switch back", "local function f()\n  redis.setresp(3)\n  if " + exists + " then return end\n  redis.setresp(2)\nend\nf()\nreturn " + zrange,
			"scripts/x.lua:10:8: returns the reply of ZRANGE, called after redis.setresp(3) (line 5)" + refused, false},
		{"entered in RESP3, returned above the switch back", "local function f()\n  if " + exists + " then return end\n  redis.setresp(2)\nend\nredis.setresp(3)\nf()\nreturn " + zrange,
			"scripts/x.lua:10:8: returns the reply of ZRANGE, called after redis.setresp(3) (line 8)" + refused, false},
		{"returned after the switch back", "local function f()\n  redis.setresp(3)\n  redis.call('EXISTS', KEYS[1])\n  redis.setresp(2)\n  return 1\nend\nf()\nreturn " + zrange, "", true},
		{"returned before the switch to RESP3", "local function f()\n  if " + exists + " then return end\n  redis.setresp(3)\n  redis.call('EXISTS', KEYS[1])\n  redis.setresp(2)\nend\nf()\nreturn " + zrange, "", true},
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
