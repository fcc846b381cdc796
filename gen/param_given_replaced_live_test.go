package gen

import (
	"testing"
)

// TestParamGivenReplacedAgreesWithServer: a local given a parameter in a
// nested block (if c then y = v ... end) and given another value after it
// in that block, or in one around it, holds that value when the block
// ends: a call passing nil for the parameter is not passed on there, and
// the server runs the script. Where a path skips the new value (the else
// of the if, a break before it) the local may still hold the parameter,
// and the server refuses the call.
func TestParamGivenReplacedAgreesWithServer(t *testing.T) {
	t.Parallel()
	checkLiveCases(t, "-- @key k\n-- @arg a string\n-- @return none\nlocal function f(v)\n", "\n", []string{"{t}k"}, []string{"a"}, []liveCase{
		{"in the same block", "local y = 'a'\nif ARGV[1] == 'a' then y = v; y = 'b' end\nredis.call('SET', KEYS[1], y)\nend\nf(nil)", "", ""},
		{"in a block around it", "local y = 'a'\nif ARGV[1] == 'a' then\nif KEYS[1] then y = v end\ny = 'b'\nend\nredis.call('SET', KEYS[1], y)\nend\nf(nil)", "", ""},
		{"in a do block", "local y = 'a'\ndo\nif ARGV[1] == 'a' then y = v end\ny = 'b'\nend\nredis.call('SET', KEYS[1], y)\nend\nf(nil)", "", ""},
		{"in the else only", "local y = 'a'\nif ARGV[1] == 'a' then y = v else y = 'b' end\nredis.call('SET', KEYS[1], y)\nend\nf(nil)", "scripts/x.lua:7:28: " + warnGivenNil, refusedArg},
		{"given in another block too", "local y = 'a'\nif ARGV[1] == 'a' then y = v end\nif KEYS[1] == 'x' then y = v; y = 'b' end\nredis.call('SET', KEYS[1], y)\nend\nf(nil)", "scripts/x.lua:8:28: " + warnGivenNil, refusedArg},
		{"after a break", "local y = 'a'\nwhile true do\nif ARGV[1] == 'a' then\ny = v\nif KEYS[1] then break end\ny = 'b'\nend\nbreak\nend\nredis.call('SET', KEYS[1], y)\nend\nf(nil)", "scripts/x.lua:14:28: " + warnGivenNil, refusedArg},
	})
}

// TestParamGivenThenAssignedAgreesWithServer: a local given a parameter on
// some paths (if c then y = v end) holds what a call passed the parameter
// also once the parameter is assigned another value (v = 'x'): a call
// passing nil is warned of, and the server refuses the call.
func TestParamGivenThenAssignedAgreesWithServer(t *testing.T) {
	t.Parallel()
	checkLiveCases(t, "-- @key k\n-- @arg a string\n-- @return none\nlocal function f(v)\n", "\n", []string{"{t}k"}, []string{"a"}, []liveCase{
		{"assigned after", "local y = 'a'\nif ARGV[1] == 'a' then y = v end\nv = 'x'\nredis.call('SET', KEYS[1], y)\nend\nf(nil)", "scripts/x.lua:8:28: " + warnGivenNil, refusedArg},
		{"assigned in the if", "local y = 'a'\nif ARGV[1] == 'a' then y = v; v = 'x' end\nredis.call('SET', KEYS[1], y)\nend\nf()", "scripts/x.lua:7:28: " + warnGivenNil, refusedArg},
		{"the local given a value after", "local y = 'a'\nif ARGV[1] == 'a' then y = v end\nv = 'x'\ny = v\nredis.call('SET', KEYS[1], y)\nend\nf(nil)", "", ""},
	})
}
