package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestReturnedTableBooleanInNullableField: a Lua boolean in a returned
// table reaches the caller as 1 (true) or nil (false): a nullable string or
// float64 field reads the nil but not the integer, so the callers get a
// *DecodeError whenever it is true. The checker must refuse it there, as
// it does return ok for @return string?, and pass a nullable int64 field
// (a bool? one reads the nil of false as no value, and is refused too:
// TestNullableBoolFalseAgreesWithServer); the server replies the integer 1
// at [0] for a key that exists.
func TestReturnedTableBooleanInNullableField(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	if err := rc.Do(ctx, rc.B().Set().Key("{t}k").Value("v").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	const local = "local ok = redis.call('EXISTS', KEYS[1]) == 1\n"
	for _, tc := range []struct{ name, ret, body, want string }{
		{"a local in a string? field", "{a string?, n int64}", local + "return {ok, 1}",
			"scripts/x.lua:5:8: returns an array with ok, assigned at line 4: a Lua boolean at [0], but field a of @return {a string?, n int64} needs a string reply"},
		{"a comparison in a string? field", "{a string?, n int64}", "return {redis.call('EXISTS', KEYS[1]) == 1, 1}",
			"scripts/x.lua:4:8: returns an array with a Lua boolean at [0], but field a of @return {a string?, n int64} needs a string reply"},
		{"a local in a float64? field", "{a float64?, n int64}", local + "return {ok, 1}",
			"scripts/x.lua:5:8: returns an array with ok, assigned at line 4: a Lua boolean at [0], but field a of @return {a float64?, n int64} needs a string reply"},
		{"an int64? field", "{a int64?, n int64}", local + "return {ok, 1}", ""},
		{"a bool? field", "{a bool?, n int64}", local + "return {ok, 1}",
			"scripts/x.lua:5:8: returns an array with ok, assigned at line 4: a Lua boolean at [0], which Redis replies as nil when it is false, but field a of @return {a bool?, n int64} reads nil as no value, never as false: put 1 or 0 there (c and 1 or 0) for false to reach the callers, or declare it a bool, which reads nil as false"},
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
