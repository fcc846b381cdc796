package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestReturnedTableLocalAgreesWithServer: a local holding a string (ARGV[n],
// a literal, tostring(...)) or a number, put in a returned table, reaches
// the caller as such, as return v does: where the decoder reads the other
// kind the callers get a *DecodeError on every call. The checker must refuse
// it, and pass a local that may hold another value by the return.
func TestReturnedTableLocalAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, ret, body, want string
		str                   bool // whether the server replies a string at [0] (else an integer)
	}{
		{"ARGV in an int64 field", "{n int64}", "local n = ARGV[1]\nreturn {n}",
			"scripts/x.lua:6:8: returns an array with n, assigned at line 5: a string (ARGV[1]) at [0], but field n of @return {n int64} needs an integer reply", true},
		{"a number in a []string", "[]string", "local n = redis.call('INCR', KEYS[1]) + 1\nreturn {n, ARGV[1]}",
			"scripts/x.lua:6:8: returns an array with n, assigned at line 5: an integer at [0], but @return []string needs a string reply for each element", false},
		{"a literal number in a string field", "{n string, a string}", "local n = 0\nreturn {n, ARGV[1]}",
			"scripts/x.lua:6:8: returns an array with n, assigned at line 5: an integer (0) at [0], but field n of @return {n string, a string} needs a string reply", false},
		{"ARGV made a number", "{n int64}", "local n = ARGV[1]\nn = tonumber(n)\nreturn {n}", "", false},
		{"ARGV or a number", "{n int64}", "local n = ARGV[1]\nif ARGV[1] == '7' then n = 5 end\nreturn {n}", "", false},
		{"a number made a string", "[]string", "local n = redis.call('INCR', KEYS[1])\nlocal s = tostring(n)\nreturn {s, ARGV[1]}", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X returns.\n-- @key k\n-- @arg a string\n-- @return " + tc.ret + "\n" + tc.body + "\n"
			if !strings.Contains(tc.body, "KEYS[1]") {
				src = strings.Replace(src, "-- @key k\n", "", 1)
				tc.want = strings.Replace(tc.want, "x.lua:6:", "x.lua:5:", 1)
				tc.want = strings.Replace(tc.want, "at line 5", "at line 4", 1)
			}
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.want)
			}
			keys := []string{}
			if strings.Contains(tc.body, "KEYS[1]") {
				keys = []string{"{t}k"}
			}
			vals, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(int64(len(keys))).Key(keys...).Arg("7").Build()).ToArray()
			if err != nil || len(vals) == 0 {
				t.Fatalf("the server replied %v, %v", vals, err)
			}
			if vals[0].IsString() != tc.str {
				t.Errorf("the server replied %s at [0]; want a string: %v", vals[0].String(), tc.str)
			}
		})
	}
}

// TestReturnedTableBooleanLocalAgreesWithServer: a local holding a Lua
// boolean, put in a returned table, reaches the caller as 1 (true) or nil
// (false), as return v does: a string field never reads it, and a list
// element no nil. The checker must refuse those, and pass a bool field, or
// a local tested true before.
func TestReturnedTableBooleanLocalAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	if err := rc.Do(ctx, rc.B().Set().Key("{t}k").Value("v").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	const local = "local ok = redis.call('EXISTS', KEYS[1]) == 1\n"
	for _, tc := range []struct {
		name, ret, body, want string
	}{
		{"a string field", "{a string}", local + "return {ok}",
			"scripts/x.lua:5:8: returns an array with ok, assigned at line 4: a Lua boolean at [0], but field a of @return {a string} needs a string reply"},
		{"a list element", "[]int64", local + "return {ok}",
			"scripts/x.lua:5:8: returns an array with ok, assigned at line 4: a Lua boolean at [0], which is nil when it is false, but @return []int64 reads no nil there: the callers get a *DecodeError then; return 1 or 0 there (c and 1 or 0)"},
		{"a bool field", "{a bool, b int64}", local + "return {ok, 1}", ""},
		{"tested true before", "[]int64", local + "if not ok then return {0} end\nreturn {ok}", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X returns.\n-- @key k\n-- @return " + tc.ret + "\n" + tc.body + "\n"
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.want)
			}
			vals, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}k").Build()).ToArray()
			if err != nil || len(vals) == 0 || !vals[0].IsInt64() {
				t.Errorf("the server replied %v, %v; want the integer 1 at [0]", vals, err)
			}
		})
	}
}
