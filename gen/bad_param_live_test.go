package gen

import (
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestBadParamAgreesWithServer: a parameter of a local function that a call
// passes true, a comparison, a table or a function, written in place, holds
// it in that call, and passed untested to redis.call the server refuses
// the call: the checker warns of it. Passed only strings, it is taken.
func TestBadParamAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		refused = "Lua redis lib command arguments must be strings or integers"
		warn    = `scripts/x.lua:5:48: warning: argument 2 of redis.call is v, a parameter that a call of its function passes %s: Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers")`
	)
	for _, tc := range []struct {
		name, pass, what, server string // what: "" for no warning
	}{
		{"a comparison", "ARGV[1] == '1'", "a comparison, true or false", refused},
		{"true", "true", "true", refused},
		{"a table", "{ARGV[1]}", "a table", refused},
		{"a function", "function() end", "a function", refused},
		{"a string", "ARGV[1] .. 'x'", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @arg a string\n-- @return none\nredis.call('ECHO', ARGV[1])\nlocal function f(v) redis.call('SET', KEYS[1], v) end\nf('x')\nf(" + tc.pass + ")\n"
			want := ""
			if tc.what != "" {
				want = strings.Replace(warn, "%s", tc.what, 1)
			}
			checkAndRun(t, rc, src, want, tc.server, []string{"{t}k"}, "1")
		})
	}
}

// TestBadParamTestedAgreesWithServer: a parameter that a call passes true,
// a comparison or a table, which the function tests first (v == true,
// type(v)), may be passed to redis.call only where the test shows it a
// string: it is taken, as the server runs it.
func TestBadParamTestedAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	for _, tc := range []struct{ name, fn, pass string }{
		{"compared with true", "local function f(v) if v == true then redis.call('SET', KEYS[1], '1') else redis.call('SET', KEYS[1], v) end end", "true"},
		{"its type a table", "local function f(v) if type(v) == 'table' then redis.call('SET', KEYS[1], table.concat(v, ',')) return end redis.call('SET', KEYS[1], v) end", "{ARGV[1]}"},
		{"its type a boolean", "local function f(v) if type(v) == 'boolean' then redis.call('SET', KEYS[1], tostring(v)) else redis.call('SET', KEYS[1], v) end end", "ARGV[1] == '1'"},
		// Its type held by a local, which the condition reads.
		{"its type, held by a local, a table", "local function f(v) local t = type(v) if t == 'table' then redis.call('SET', KEYS[1], table.concat(v, ',')) return end redis.call('SET', KEYS[1], v) end", "{ARGV[1]}"},
		{"its type, held by a local, a boolean", "local function f(v) local t = type(v) if t == 'boolean' then redis.call('SET', KEYS[1], tostring(v)) else redis.call('SET', KEYS[1], v) end end", "ARGV[1] == '1'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @arg a string\n-- @return none\nredis.call('ECHO', ARGV[1])\n" + tc.fn + "\nf('x')\nf(" + tc.pass + ")\n"
			checkAndRun(t, rc, src, "", "", []string{"{t}k"}, "1")
		})
	}
}
