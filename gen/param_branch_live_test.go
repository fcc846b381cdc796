package gen

import (
	"testing"
)

// TestParamBranchAgreesWithServer: a parameter of a local function used
// under a test of another parameter (if mode == 'set' then ... v ... end)
// is used only by the calls whose values pass that test: a call that
// passes nil for it with another value written in place for the tested
// one (f('get')) never reaches the use. Such correct scripts are taken,
// and the server runs them. A call that passes the test, or passes a
// value the checker cannot read there (f(ARGV[1])), and passes nil, is
// warned of, and the server refuses the call.
func TestParamBranchAgreesWithServer(t *testing.T) {
	t.Parallel()
	checkLiveCases(t, "-- @key k\n-- @arg a string\n-- @return none\nlocal function f(mode, v)\n", "\n", []string{"{t}k"}, []string{"a"}, []liveCase{
		{"compared with a string", "if mode == 'set' then redis.call('SET', KEYS[1], v) end\nend\nf('get')\nf('set', ARGV[1])", "", ""},
		{"the else", "if mode == 'get' then redis.call('GET', KEYS[1]) else redis.call('SET', KEYS[1], v) end\nend\nf('get')\nf('set', ARGV[1])", "", ""},
		{"~=", "if mode ~= 'get' then redis.call('SET', KEYS[1], v) end\nend\nf('get', nil)\nf('set', ARGV[1])", "", ""},
		{"a number", "if mode == 1 then redis.call('SET', KEYS[1], v) end\nend\nf(2)\nf(1.0, ARGV[1])", "", ""},
		{"its truth", "if mode then redis.call('SET', KEYS[1], v) end\nend\nf(false)\nf(nil)\nf(true, ARGV[1])", "", ""},
		{"not its truth", "if not mode then return end\nif not mode then return else redis.call('SET', KEYS[1], v) end\nend\nf()\nf('x', ARGV[1])", "", ""},
		{"one side of an and", "if mode == 'set' and KEYS[1] then redis.call('SET', KEYS[1], v) end\nend\nf('get')\nf('set', ARGV[1])", "", ""},
		{"a call that passes the test", "if mode == 'set' then redis.call('SET', KEYS[1], v) end\nend\nf('get')\nf('set')\nredis.call('SET', KEYS[1], ARGV[1])", "scripts/x.lua:5:50: " + warnParamNil, refusedArg},
		{"a value not written in place", "if mode == 'a' then redis.call('SET', KEYS[1], v) end\nend\nf(ARGV[1])", "scripts/x.lua:5:48: " + warnParamNil, refusedArg},
		{"one side of an or", "if mode == 'set' or KEYS[1] then redis.call('SET', KEYS[1], v) end\nend\nf('get')\nf('set', ARGV[1])", "scripts/x.lua:5:61: " + warnParamNil, refusedArg},
	})
}
