package gen

import (
	"testing"
)

// TestParamEarlyExitAgreesWithServer: a parameter of a local function used
// after an early exit on a test of another parameter (if mode ~= 'set'
// then return end) is used only by the calls whose values pass that test:
// a call passing nil for it and a value that leaves (f('get')) never
// reaches the use. Such correct scripts are taken, and the server runs
// them. A call that reaches the use passing nil, or an if that does not
// leave, is warned of, and the server refuses the call.
func TestParamEarlyExitAgreesWithServer(t *testing.T) {
	t.Parallel()
	checkLiveCases(t, "-- @key k\n-- @arg a string\n-- @return none\nlocal function f(mode, v)\n", "\n", []string{"{t}k"}, []string{"a"}, []liveCase{
		{"~= a string, then return", "if mode ~= 'set' then return end\nredis.call('SET', KEYS[1], v)\nend\nf('get')\nf('set', ARGV[1])", "", ""},
		{"not its truth, then return", "if not mode then return end\nredis.call('SET', KEYS[1], v)\nend\nf()\nf('x', ARGV[1])", "", ""},
		{"in the else", "if mode == 'set' then redis.call('DEL', KEYS[1]) else return end\nredis.call('SET', KEYS[1], v)\nend\nf('get')\nf('set', ARGV[1])", "", ""},
		{"a call that passes it", "if mode == 'get' then return end\nredis.call('SET', KEYS[1], v)\nend\nf('get')\nf('x')\nredis.call('SET', KEYS[1], ARGV[1])", "scripts/x.lua:6:28: " + warnParamNil, refusedArg},
		{"an if that does not leave", "if mode ~= 'set' then redis.call('DEL', KEYS[1]) end\nredis.call('SET', KEYS[1], v)\nend\nf('get')\nf('set', ARGV[1])", "scripts/x.lua:6:28: " + warnParamNil, refusedArg},
		{"after the block it leaves in", "if ARGV[1] == '' then\nif mode ~= 'set' then return end\nend\nredis.call('SET', KEYS[1], v)\nend\nf('get')\nf('set', ARGV[1])", "scripts/x.lua:8:28: " + warnParamNil, refusedArg},
	})
}
