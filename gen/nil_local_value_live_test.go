package gen

import (
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestNilLocalGivenValueAgreesWithServer: a local declared without a value
// (or false) and given, on every path, a value that is never nil nor false
// (tostring, string.format, string.sub, cjson.encode, redis.sha1hex, a
// declared key or arg, a concatenation, a number, #t, a local declared
// with one of those and assigned nothing else), or by a numeric
// for whose number bounds make it run and that has no break, holds one at
// redis.call, and the server takes the call: the checker must not warn. A
// value that may be nil or false (tonumber, redis.call('GET'), a table's
// field, cjson.decode's, ARGV[i] of an index not written as a number: a
// variadic tail may be shorter) is still warned of, and the server refuses
// the call on the path where it is.
func TestNilLocalGivenValueAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		c       = "redis.call('EXISTS', KEYS[1]) == 1"
		refused = "Lua redis lib command arguments must be strings or integers"
		warn    = `scripts/x.lua:8:28: warning: argument 2 of redis.call is v, a local that may hold nil or false there (declared without a value, or assigned nil or false, and given one only on some paths): Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers"); give it a value on every path, or test it first (if v then ... end)`
	)
	given := func(a, b string) string {
		return "local v\nif " + c + " then v = " + a + " else v = " + b + " end\nredis.call('SET', KEYS[1], v)\nredis.call('DEL', KEYS[1])"
	}
	for _, tc := range []struct {
		name, body, want, server string // server: part of Redis's error, "" for none
	}{
		{"declared args", given("ARGV[1]", "ARGV[2]"), "", ""},
		{"a declared key", given("KEYS[2]", "'x'"), "", ""},
		{"tostring", given("tostring(ARGV[1])", "tostring(nil)"), "", ""},
		{"string.format", given("string.format('%s:%d', ARGV[1], 3)", "'x'"), "", ""},
		{"string.sub", given("string.sub(ARGV[1], 9)", "ARGV[2]:sub(1, 1)"), "", ""},
		{"cjson.encode", given("cjson.encode({a = 1})", "'x'"), "", ""},
		{"redis.sha1hex", given("redis.sha1hex(ARGV[1])", "'x'"), "", ""},
		{"a concatenation", given("ARGV[1] .. ARGV[2]", "'x'"), "", ""},
		{"a number and arithmetic", given("1", "#ARGV + 1"), "", ""},
		{"a length", given("#KEYS", "'x'"), "", ""},
		{"an and of two values", given("true and 'x'", "ARGV[1] and ARGV[2]"), "", ""},
		{"a string method of a literal or an arg", given("('x'):upper()", "ARGV[1]:sub(1)"), "", ""},
		{"a copy of an and of two values", "local a = true and 'x'\n" + given("'x'", "a"), "", ""},
		{"an and that may give false", given("'x'", "redis.call('GET', KEYS[1]) and 'x'"), warn, refused},
		{"an and that may give nil", given("'x'", "'x' and tonumber(ARGV[1])"), warn, refused},
		{"a copy of a declared arg", "local a = ARGV[1]\n" + given("'x'", "a"), "", ""},
		{"a copy of a library call's value", "local a = string.upper(ARGV[1])\nlocal b = a\n" + given("'x'", "b"), "", ""},
		{"a copy of a local assigned nil in the if", "local a = ARGV[1]\nlocal v\nif " + c + " then v = 'x' else a = nil; v = a end\nredis.call('SET', KEYS[1], v)",
			strings.Replace(warn, ":8:", ":9:", 1), refused},
		{"a copy of a local assigned tonumber", "local a = ARGV[1]\na = tonumber(a)\n" + given("'x'", "a"), strings.Replace(warn, ":8:", ":10:", 1), refused},
		{"a copy of a local a function assigns", "local a = ARGV[1]\nlocal function f() a = nil end\nf()\n" + given("'x'", "a"), strings.Replace(warn, ":8:", ":11:", 1), refused},
		{"tonumber", given("'x'", "tonumber(ARGV[1])"), warn, refused},
		{"redis.call", given("'x'", "redis.call('GET', KEYS[1])"), warn, refused},
		{"a table's field", "local t = {}\n" + given("'x'", "t.x"), strings.Replace(warn, ":8:", ":9:", 1), refused},
		{"cjson.decode's field", given("'x'", "cjson.decode('{}').a"), warn, refused},
		{"an arg at an index not written as a number", "local i = #ARGV + 1\n" + given("'x'", "ARGV[i]"),
			"scripts/x.lua:8:61: dynamic ARGV index needs a variadic @arg\n" + strings.Replace(warn, ":8:", ":9:", 1), refused},
		{"a table's method", "local t = {sub = function() return nil end}\n" + given("'x'", "t:sub(1)"), strings.Replace(warn, ":8:", ":9:", 1), refused},
		{"a local tostring", "local tostring = function() return nil end\n" + given("'x'", "tostring(1)"), strings.Replace(warn, ":8:", ":9:", 1), refused},
		{"a numeric for that always runs", "local v = false\nfor i = 1, 3 do v = tostring(i) end\nredis.call('SET', KEYS[1], v)\nredis.call('DEL', KEYS[1])", "", ""},
		{"a numeric for that always runs, in a branch", "local v\nif " + c + " then\n  for i = 3, 1, -1 do v = i end\nelse\n  v = 'x'\nend\nredis.call('SET', KEYS[1], v)\nredis.call('DEL', KEYS[1])", "", ""},
		{"a numeric for that never runs", "local v = false\nfor i = 1, 0 do v = tostring(i) end\nredis.call('SET', KEYS[1], v)",
			warn, refused},
		{"a numeric for that may not run", "local v = false\nfor i = 1, #ARGV - 2 do v = tostring(i) end\nredis.call('SET', KEYS[1], v)",
			warn, refused},
		{"a numeric for left by a break", "local v = false\nfor i = 1, 3 do\n  if redis.call('EXISTS', KEYS[1]) == 0 then break end\n  v = tostring(i)\nend\nredis.call('SET', KEYS[1], v)",
			strings.Replace(warn, ":8:", ":11:", 1), refused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @key k2\n-- @arg a string\n-- @arg b string\n-- @return none\n" + tc.body +
				"\nredis.call('SET', KEYS[2], ARGV[1] .. ARGV[2])\nredis.call('DEL', KEYS[2])\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}missing", "{t}k2"}, "ab", "cd")
		})
	}
}

// TestNilLocalGivenListedValueAgreesWithServer: ARGV[i] or KEYS[i], i the
// counter of a numeric for from 1 (or more) up to #ARGV or #KEYS, is one
// of the keys or args sent: a local given it on every path holds a value
// at redis.call. Past #ARGV, or from 0, it may be nil: still warned of.
func TestNilLocalGivenListedValueAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		refused = "Lua redis lib command arguments must be strings or integers"
		warn    = `scripts/x.lua:8:30: warning: argument 2 of redis.call is v, a local that may hold nil or false there (declared without a value, or assigned nil or false, and given one only on some paths): Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers"); give it a value on every path, or test it first (if v then ... end)`
	)
	loop := func(bounds, value string) string {
		return "for i = " + bounds + " do\n  local v\n  if i == 99 then v = 'x' else v = " + value + " end\n  redis.call('SET', KEYS[1], v)\n  redis.call('DEL', KEYS[1])\nend"
	}
	for _, tc := range []struct {
		name, body, want, server string // server: part of Redis's error, "" for none
	}{
		{"an arg up to #ARGV", loop("1, #ARGV", "ARGV[i]"), "", ""},
		{"a key up to #KEYS", loop("2, #KEYS, 1", "KEYS[i]"), "", ""},
		{"an arg past #ARGV", loop("1, #ARGV + 1", "ARGV[i]"), warn, refused},
		{"an arg from 0", loop("0, #ARGV", "ARGV[i]"), warn, refused},
		{"an arg by halves", loop("1, #ARGV, 0.5", "ARGV[i]"), warn, refused},
		{"an arg down from #ARGV", loop("#ARGV, 1, -1", "ARGV[i]"), "", ""},
		{"an arg, the counter changed", strings.Replace(loop("1, #ARGV", "ARGV[i]"), "  local v\n", "  local v\n  i = i + 1\n", 1),
			strings.Replace(warn, ":8:", ":9:", 1), refused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @key more...\n-- @arg rest... string\n-- @return none\n" + tc.body +
				"\nredis.call('DEL', unpack(KEYS))\nredis.call('ECHO', table.concat(ARGV))\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}missing", "{t}k2"}, "ab", "cd")
		})
	}
}
