package gen

import "testing"

// TestReturnedArgTypeWarnings: an @arg that a local function returns
// (return ARGV[1], or the parameter a call passes it) where Redis reads an
// integer or a number is warned of as the @arg written there is: a string
// @arg fails at run time when its value is no number.
func TestReturnedArgTypeWarnings(t *testing.T) {
	const head = "-- @key k\n-- @arg n string\n-- @return none\n"
	const setex = "warning: SETEX reads an integer there (seconds), and ARGV[1] is @arg n string: a value that is no integer fails at run time; declare @arg n int64"
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"returned in place", head + "local function f() return ARGV[1] end\nredis.call('SETEX', KEYS[1], f(), 'v')\n",
			[]string{"scripts/x.lua:5:30: " + setex}},
		{"a parameter returned", head + "local function f(x) return x end\nredis.call('SETEX', KEYS[1], f(ARGV[1]), 'v')\n",
			[]string{"scripts/x.lua:5:30: " + setex}},
		{"held by a local", head + "local function f() return ARGV[1] end\nlocal s = f()\nredis.call('SETEX', KEYS[1], s, 'v')\n",
			[]string{"scripts/x.lua:6:30: " + setex}},
		{"a number", head + "local function f() return ARGV[1] end\nredis.call('ZADD', KEYS[1], f(), 'm')\n",
			[]string{"scripts/x.lua:5:29: warning: ZADD reads a number there (score), and ARGV[1] is @arg n string: a value that is no number fails at run time; declare @arg n float64 or int64"}},
		{"an int64", "-- @key k\n-- @arg n int64\n-- @return none\nlocal function f() return ARGV[1] end\nredis.call('SETEX', KEYS[1], f(), 'v')\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) { checkWarnings(t, tc.src, tc.want) })
	}
}
