package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestResp3LoopSwitchedBackInBranchAgreesWithServer: redis.setresp(3) in
// an if in a loop, switched back by redis.setresp(2) below it in the same
// branch, never holds at the loop's next iteration: the checker must take
// the return of ZRANGE ... WITHSCORES called above it for @return
// []string, which the server replies as a flat array; a redis.setresp(2)
// in the other branch still switches nothing back.
func TestResp3LoopSwitchedBackInBranchAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	if err := rc.Do(ctx, rc.B().Zadd().Key("{t}z").ScoreMember().ScoreMember(1, "a").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	const zrange = "redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')"
	for _, tc := range []struct {
		name, body, want string
		flat             bool
	}{
		{"same branch", "local out\nfor i = 1, 2 do\n  out = " + zrange + "\n  if i == 1 then\n    redis.setresp(3)\n    redis.call('ZSCORE', KEYS[1], 'a')\n    redis.setresp(2)\n  end\nend\nreturn out", "", true},
		{"other branch", "local out\nfor i = 1, 2 do\n  out = " + zrange + "\n  if i == 1 then\n    redis.setresp(3)\n  else\n    redis.setresp(2)\n  end\nend\nreturn out",
			"scripts/x.lua:13:8: returns out, assigned at line 6: the reply of ZRANGE, called after redis.setresp(3) (line 8): it is then an array of doubles or of arrays (scores as doubles, pairs in arrays of two), not a flat array of strings, which @return []string does not read (the callers get a *DecodeError, or values are lost); call ZRANGE before redis.setresp(3), or build the reply in the script", false},
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
