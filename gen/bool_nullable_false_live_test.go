package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestNullableBoolFalseAgreesWithServer: Redis replies a Lua false as nil,
// which @return bool? (and a bool? field) reads as no value, never as
// false: a script that returns a Lua boolean (a comparison) there can never
// give the callers false, and its false reads as its nil. The checker must
// refuse it, and pass 1 or 0, a plain bool, or a boolean tested true
// before; and false itself, which is how a script replies nil (the only
// way in an array: {false, n}); the server replies nil for the false of a
// missing key.
func TestNullableBoolFalseAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	const local = "local ok = redis.call('EXISTS', KEYS[1]) == 1\n"
	const fix = ", but @return bool? reads nil as no value (ok is false), never as false: return 1 or 0 (c and 1 or 0) for false to reach the callers, or declare @return bool, which reads nil as false"
	for _, tc := range []struct {
		name, ret, body, want string
		isNil                 bool // whether the server replies nil (at [0] for a record)
	}{
		{"a comparison", "bool?", "return redis.call('EXISTS', KEYS[1]) == 1",
			"scripts/x.lua:4:8: returns a Lua boolean, which Redis replies as nil when it is false" + fix, true},
		{"a local", "bool?", local + "return ok",
			"scripts/x.lua:5:8: returns ok, assigned at line 4: a Lua boolean, which Redis replies as nil when it is false" + fix, true},
		{"false", "bool?", "if redis.call('EXISTS', KEYS[1]) == 1 then\n  return nil\nend\nreturn false", "", true},
		{"false for no value", "bool?", "local v = redis.call('GET', KEYS[1])\nif not v then\n  return false\nend\nreturn v == '1' and 1 or 0", "", true},
		{"an and/or giving false", "bool?", "local v = redis.call('GET', KEYS[1])\nreturn v and 1 or false", "", true},
		{"false in a bool? field", "{a bool?, n int64}", "local v = redis.call('GET', KEYS[1])\nreturn {v and 1 or false, 1}", "", true},
		{"a bool? field", "{a bool?, n int64}", local + "return {ok, 1}",
			"scripts/x.lua:5:8: returns an array with ok, assigned at line 4: a Lua boolean at [0], which Redis replies as nil when it is false, but field a of @return {a bool?, n int64} reads nil as no value, never as false: put 1 or 0 there (c and 1 or 0) for false to reach the callers, or declare it a bool, which reads nil as false", true},
		{"1 or 0", "bool?", "return redis.call('EXISTS', KEYS[1]) == 1 and 1 or 0", "", false},
		{"a bool", "bool", "return redis.call('EXISTS', KEYS[1]) == 1", "", true},
		{"a bool field", "{a bool, n int64}", local + "return {ok, 1}", "", true},
		{"tested true", "bool?", local + "if not ok then return nil end\nreturn ok", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- X returns.\n-- @key k\n-- @return " + tc.ret + "\n" + tc.body + "\n"
			if got := strings.Join(checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)}), "\n"); got != tc.want {
				t.Errorf("checker:\n%s\nwant:\n%s", got, tc.want)
			}
			res := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}missing").Build())
			isNil := rueidis.IsRedisNil(res.Error())
			if vals, err := res.ToArray(); err == nil && len(vals) > 0 {
				isNil = vals[0].IsNil()
			} else if err != nil && !isNil && !strings.Contains(tc.ret, "{") {
				if _, ierr := res.AsInt64(); ierr != nil {
					t.Fatalf("the server replied %v", ierr)
				}
			}
			if isNil != tc.isNil {
				t.Errorf("the server replied nil: %v, want %v", isNil, tc.isNil)
			}
		})
	}
}
