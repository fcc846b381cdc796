package gen

import (
	"context"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestReturnedValueKindsAgreeWithServer returns values whose reply their
// source tells (KEYS and ARGV, which hold strings, and Lua functions that
// give a string or a number) for an @return that does not read it: the
// checker must refuse each, and the server must reply the shape its message
// says, which the generated decoder refuses.
func TestReturnedValueKindsAgreeWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, ret, body, want string
		str                   bool // the server replies a string (else an integer)
	}{
		{"an int64 argument", "int64", "redis.call('GET', KEYS[1])\nreturn ARGV[1]",
			`scripts/x.lua:6:8: returns a string (ARGV[1]), but @return int64 needs an integer reply: ARGV and KEYS hold strings, whatever the @arg type; return tonumber(...)`, true},
		{"a key through a local", "int64", "local k = KEYS[1]\nredis.call('GET', k)\nreturn k",
			`scripts/x.lua:6:8: returns k, assigned at line 4: a string (KEYS[1]), but @return int64 needs an integer reply: ARGV and KEYS hold strings, whatever the @arg type; return tonumber(...)`, true},
		{"tostring of a count", "int64", "return tostring(redis.call('INCR', KEYS[1]))",
			`scripts/x.lua:4:8: returns a string (tostring(...)), but @return int64 needs an integer reply`, true},
		{"a formatted count", "int64?", "return string.format('%d', redis.call('INCR', KEYS[1]))",
			`scripts/x.lua:4:8: returns a string (string.format(...)), but @return int64? needs an integer reply`, true},
		{"cjson.encode in a list", "[]int64", "return {cjson.encode({redis.call('INCR', KEYS[1])})}",
			`scripts/x.lua:4:8: returns an array with a string (cjson.encode(...)) at [0], but @return []int64 needs an integer reply for each element`, true},
		{"tonumber of a value", "string?", "return tonumber(redis.call('INCR', KEYS[1]))",
			`scripts/x.lua:4:8: returns an integer (tonumber(...)), but @return string? needs a string reply: Lua numbers reach the caller as integers; return tostring(...)`, false},
		{"a length", "string", "return string.len(redis.call('GET', KEYS[1]) or '')",
			`scripts/x.lua:4:8: returns an integer (string.len(...)), but @return string needs a string reply: Lua numbers reach the caller as integers; return tostring(...)`, false},
		{"pcall's first value", "string?", "return pcall(function() return redis.call('GET', KEYS[1]) end)",
			`scripts/x.lua:4:8: returns a Lua boolean (true arrives as 1, false as nil) (pcall(...)), but @return string? needs a string reply`, false},
		{"a type name", "int64", "return type(redis.call('GET', KEYS[1]))",
			`scripts/x.lua:4:8: returns a string (type(...)), but @return int64 needs an integer reply`, true},
		{"math.floor in a record", "{n string}", "return {math.floor(redis.call('INCR', KEYS[1]) / 2)}",
			`scripts/x.lua:4:8: returns an array with an integer (math.floor(...)) at [0], but field n of @return {n string} needs a string reply`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			arg := ""
			if strings.Contains(tc.body, "ARGV") {
				arg = "-- @arg n int64\n"
			}
			src := "-- X returns a value.\n-- @key k\n" + arg + "-- @return " + tc.ret + "\n" + tc.body + "\n"
			errs := checkFiles(t, File{Path: "scripts/x.lua", Source: []byte(src)})
			if len(errs) != 1 || errs[0] != tc.want {
				t.Errorf("checker:\n%s\nwant:\n%s", strings.Join(errs, "\n"), tc.want)
			}
			m, err := rc.Do(ctx, rc.B().Eval().Script(src).Numkeys(1).Key("{t}k").Arg("42").Build()).ToMessage()
			if err != nil {
				t.Fatal(err)
			}
			if tc.ret[0] == '[' || tc.ret[0] == '{' {
				vals, err := m.ToArray()
				if err != nil || len(vals) != 1 {
					t.Fatalf("the server replied %s, want an array of one", m.String())
				}
				m = vals[0]
			}
			if m.IsString() != tc.str || m.IsInt64() == tc.str {
				t.Errorf("the server replied %s, not the shape the message says", m.String())
			}
		})
	}
}
