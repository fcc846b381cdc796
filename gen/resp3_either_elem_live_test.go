package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestResp3AndOrInReturnedTable: an and/or in a returned table gives the
// reply of a call made after redis.setresp(3) in its RESP3 shape, as the
// call alone there does ({redis.call('ZSCORE', k, m) or ”}): a double
// where the decoder reads a string. The checker must refuse it, and pass
// it in a float64 field, or when the only value left is a string.
func TestResp3AndOrInReturnedTable(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	if err := rc.Do(ctx, rc.B().Zadd().Key("{t}k").ScoreMember().ScoreMember(1.5, "m").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, ret, body, want string
		double                bool // whether the server replies a double at [0]
	}{
		{"list element", "[]string", "redis.setresp(3)\nreturn {redis.call('ZSCORE', KEYS[1], 'm') or ''}",
			"scripts/x.lua:4:8: returns an array with an and/or that may give the reply of ZSCORE at [0], called after redis.setresp(3) (line 3): it is then a double, not a string, which @return []string does not read there (the callers get a *DecodeError); call ZSCORE before redis.setresp(3), or build the value in the script", true},
		{"record field", "{score string, n int64}", "redis.setresp(3)\nreturn {KEYS[1] ~= '' and redis.call('ZINCRBY', KEYS[1], 0, 'm') or '0', 1}",
			"scripts/x.lua:4:8: returns an array with an and/or that may give the reply of ZINCRBY at [0], called after redis.setresp(3) (line 3): it is then a double, not a string, which field score of @return {score string, n int64} does not read there (the callers get a *DecodeError); call ZINCRBY before redis.setresp(3), or build the value in the script", true},
		{"float64 field", "{score float64, n int64}", "redis.setresp(3)\nreturn {redis.call('ZSCORE', KEYS[1], 'm') or 0, 1}", "", true},
		{"called before redis.setresp(3)", "[]string", "local s = redis.call('ZSCORE', KEYS[1], 'm')\nredis.setresp(3)\nreturn {s or ''}", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @return " + tc.ret + "\n" + tc.body + "\n"
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.want)
			}
			vals, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}k").Build()).ToArray()
			if err != nil || len(vals) == 0 {
				t.Fatalf("the server replied %v, %v", vals, err)
			}
			if vals[0].IsFloat64() != tc.double {
				t.Errorf("the server replied %s at [0]; want a double: %v", vals[0].String(), tc.double)
			}
		})
	}
}
