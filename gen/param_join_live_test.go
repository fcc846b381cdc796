package gen

import (
	"testing"
)

// TestParamJoinAgreesWithServer: a parameter of a local function given a
// value on some paths only (if c then v = 'z' end) holds what a call
// passes it on the others, and one given another parameter (v = w), on
// some paths or all, holds what a call passes that one: nil or false, or a
// table, passed on to redis.call untested is warned of, and the server
// refuses the call on that path. Tested first, given a value on every
// path, or passed a value, it is taken, and the server runs the script.
func TestParamJoinAgreesWithServer(t *testing.T) {
	t.Parallel()
	const warnTable = `warning: argument 2 of redis.call is v, a local given the parameter w, which a call of its function passes a table: Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers")`
	const warnViaW = `warning: argument 2 of redis.call is v, a local given the parameter w, which a call of its function passes nil or false (f(nil), f(false), or no value there): Redis refuses the call at run time on that call ("Lua redis lib command arguments must be strings or integers"); pass a value, or test it first (if v then ... end)`
	checkLiveCases(t, "-- @key k\n-- @arg a string\n-- @return none\nlocal function f(v, w)\n", "\n", []string{"{t}k"}, []string{"b"}, []liveCase{
		{"given a value on some paths", "if ARGV[1] == 'a' then v = 'z' end\nredis.call('SET', KEYS[1], v)\nend\nf(nil, 'y')", "scripts/x.lua:6:28: " + warnParamNil, refusedArg},
		{"given another parameter on some paths", "if ARGV[1] == 'a' then v = 'z' else v = w end\nredis.call('SET', KEYS[1], v)\nend\nf('x', nil)", "scripts/x.lua:6:28: " + warnViaW, refusedArg},
		{"given another parameter", "v = w\nredis.call('SET', KEYS[1], v)\nend\nf('x', false)\nredis.call('SET', KEYS[1], ARGV[1])", "scripts/x.lua:6:28: " + warnViaW, refusedArg},
		{"given another parameter that a call passes a table", "if ARGV[1] == 'b' then v = w end\nredis.call('SET', KEYS[1], v)\nend\nf('x', {})", "scripts/x.lua:6:28: " + warnTable, refusedArg},
		{"given another parameter after a test of itself", "if not v then return end\nif ARGV[1] == 'b' then v = w end\nredis.call('SET', KEYS[1], v)\nend\nf('x', nil)", "scripts/x.lua:7:28: " + warnViaW, refusedArg},
		// None of these misbehaves.
		{"given a default where it is nil", "if not v then v = 'd' end\nredis.call('SET', KEYS[1], v)\nend\nf(nil, 'y')\nredis.call('SET', KEYS[1], ARGV[1])", "", ""},
		{"given a value on every path", "if ARGV[1] == 'a' then v = 'z' else v = 'y' end\nredis.call('SET', KEYS[1], v)\nend\nf(nil, 'y')", "", ""},
		{"given another parameter, tested first", "if ARGV[1] == 'b' then v = w end\nif v then redis.call('SET', KEYS[1], v) end\nend\nf(nil, nil)", "", ""},
		{"given another parameter passed a value", "if ARGV[1] == 'b' then v = w end\nredis.call('SET', KEYS[1], v)\nend\nf('x', 'y')", "", ""},
	})
}
