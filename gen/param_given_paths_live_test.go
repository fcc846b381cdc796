package gen

import (
	"testing"
)

// TestParamGivenOnPathsAgreesWithServer: a local of a local function given
// a parameter on some paths only (local y = 'a'; if c then y = v end), or
// after its declaration, holds what a call passes the parameter on those
// paths: nil or false a call passes it, passed on to redis.call untested,
// is warned of, and the server refuses the call on that path. Tested
// first (if y then), or given a value again after, it is taken, and the
// server runs the script.
func TestParamGivenOnPathsAgreesWithServer(t *testing.T) {
	t.Parallel()
	checkLiveCases(t, "-- @key k\n-- @arg a string\n-- @return none\nlocal function f(v)\n", "\n", []string{"{t}k"}, []string{"a"}, []liveCase{
		{"in an if", "local y = 'a'\nif ARGV[1] == 'a' then y = v end\nredis.call('SET', KEYS[1], y)\nend\nf(nil)", "scripts/x.lua:7:28: " + warnGivenNil, refusedArg},
		{"after its declaration", "local y\ny = v\nredis.call('SET', KEYS[1], y)\nend\nf(false)\nredis.call('SET', KEYS[1], ARGV[1])", "scripts/x.lua:7:28: " + warnGivenNil, refusedArg},
		{"in a loop", "local y = 'a'\nfor i = 1, 2 do\nredis.call('SET', KEYS[1], y)\ny = v\nend\nend\nf()\nredis.call('SET', KEYS[1], ARGV[1])", "scripts/x.lua:7:28: " + warnGivenNil, refusedArg},
		{"tested first", "local y = 'a'\nif ARGV[1] == 'a' then y = v end\nif y then redis.call('SET', KEYS[1], y) end\nend\nf(nil)", "", ""},
		{"given a value again", "local y = 'a'\nif ARGV[1] == 'a' then y = v end\ny = 'b'\nredis.call('SET', KEYS[1], y)\nend\nf(nil)", "", ""},
		{"passed a value", "local y = 'a'\nif ARGV[1] == 'a' then y = v end\nredis.call('SET', KEYS[1], y)\nend\nf('x')", "", ""},
	})
}
