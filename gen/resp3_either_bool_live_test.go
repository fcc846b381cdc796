package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestResp3AndOrBooleanInReturnedTable: after redis.setresp(3), an and/or
// in a returned table that may give a Lua boolean ({c or false}; true, from
// the left of an or) reaches the caller as a RESP3 boolean, as the boolean
// alone there does: a list of integers does not read it. The checker must
// refuse it, and pass it in a bool field, or an and/or giving 1 or 0.
func TestResp3AndOrBooleanInReturnedTable(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const c = "redis.call('EXISTS', KEYS[1]) == 0"
	for _, tc := range []struct {
		name, ret, body, want string
		boolean               bool // whether the server replies a RESP3 boolean at [0]
	}{
		{"or false", "[]int64", "redis.setresp(3)\nreturn {" + c + " or false, 1}",
			"scripts/x.lua:4:8: returns an array with an and/or that may give a Lua boolean at [0] after redis.setresp(3) (line 3): Redis then replies a Lua boolean as a RESP3 boolean (false, not nil; true, not 1), which @return []int64 does not read there: the callers get a *DecodeError; switch back with redis.setresp(2) before returning, or put 1 and 0 in the table", true},
		{"or a number", "[]int64", "redis.setresp(3)\nreturn {" + c + " or 0, 1}",
			"scripts/x.lua:4:8: returns an array with an and/or that may give a Lua boolean at [0] after redis.setresp(3) (line 3): Redis then replies a Lua boolean as a RESP3 boolean (false, not nil; true, not 1), which @return []int64 does not read there: the callers get a *DecodeError; switch back with redis.setresp(2) before returning, or put 1 and 0 in the table", true},
		{"a bool field", "{a bool, n int64}", "redis.setresp(3)\nreturn {" + c + " or false, 1}", "", true},
		{"1 or 0", "[]int64", "redis.setresp(3)\nreturn {" + c + " and 1 or 0, 1}", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @return " + tc.ret + "\n" + tc.body + "\n"
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.want)
			}
			vals, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}missing").Build()).ToArray()
			if err != nil || len(vals) == 0 {
				t.Fatalf("the server replied %v, %v", vals, err)
			}
			if vals[0].IsBool() != tc.boolean {
				t.Errorf("the server replied %s at [0]; want a boolean: %v", vals[0].String(), tc.boolean)
			}
		})
	}
}
