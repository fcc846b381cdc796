package gen

import (
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestReturnedKindAgreesWithServer: a call of a local function passed to
// redis.call gives it the first value of the return that ends it, or all
// its values when the call is last. A value written as no string or number
// (a table, true, a comparison, nil among the last call's values) is
// refused by Redis ("Lua redis lib command arguments must be strings or
// integers"): the checker refuses a call every return of which passes one,
// and warns of one some returns of which do; the server refuses the call on
// such a path.
func TestReturnedKindAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		refused = "Lua redis lib command arguments must be strings or integers"
		every   = "scripts/x.lua:5:28: argument 2 of redis.call is f(), a call of a local function every return of which passes %s: Redis refuses it at run time (command arguments must be strings or numbers)"
		some    = "scripts/x.lua:5:28: warning: argument 2 of redis.call is f(), a call of a local function some returns of which pass %s: Redis refuses the call at run time on those paths (\"Lua redis lib command arguments must be strings or integers\")"
		c       = "redis.call('EXISTS', KEYS[1]) == 0"
	)
	for _, tc := range []struct {
		name, fn, call, want, server string // server: part of Redis's error, "" for none
	}{
		{"a table", "return {}", "f()", strings.Replace(every, "%s", "a table", 1), refused},
		{"true", "return true", "f()", strings.Replace(every, "%s", "true", 1), refused},
		{"a comparison", "return ARGV[1] == 'x'", "f()", strings.Replace(every, "%s", "a comparison, true or false", 1), refused},
		{"nil after a value, last", "return 'x', nil", "f()", strings.Replace(every, "%s", "nil", 1), refused},
		{"a table after a value, last", "return 'x', {}", "f()", strings.Replace(every, "%s", "a table", 1), refused},
		{"a table on some paths", "if " + c + " then return {} end return 'x'", "f()", strings.Replace(some, "%s", "a table", 1), refused},
		{"a table after a value on some paths, last", "if " + c + " then return 'x', {} end return 'x'", "f()", strings.Replace(some, "%s", "a table", 1), refused},
		{"a table after a value, not last", "return 'x', {}", "f(), 'EX', 10", "", ""},
		{"a table after a value, in parentheses", "return 'x', {}", "(f())", "", ""},
		{"a string", "return 'x'", "f()", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @arg a string\n-- @return none\nlocal function f() " + tc.fn + " end\nredis.call('SET', KEYS[1], " + tc.call + ")\nredis.call('DEL', KEYS[1])\nredis.call('ECHO', ARGV[1])\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}k"}, "a")
		})
	}
}
