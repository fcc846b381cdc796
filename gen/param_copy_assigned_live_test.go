package gen

import (
	"testing"
)

// TestParamCopyAssignedAgreesWithServer: a local given a parameter (local
// y = v) and then another value (y = nil) no longer holds the parameter: a
// test of the parameter shows nothing of it. The checker refuses passing
// it to redis.call, and the server refuses the call.
func TestParamCopyAssignedAgreesWithServer(t *testing.T) {
	t.Parallel()
	checkLiveCases(t, "-- @key k\n-- @return none\n", "\nf('x')\n", []string{"{t}k"}, nil, []liveCase{
		{"the parameter tested", "local function f(v) local y = v\ny = nil\nif v then redis.call('SET', KEYS[1], y) end end",
			"scripts/x.lua:5:38: argument 2 of redis.call is y, which holds nil there: Redis refuses it at run time (command arguments must be strings or numbers)", refusedArg},
		{"the parameter tested, then replaced", "local function f(v) local y = v\ny = nil\nif v then v = v .. ':x'\nredis.call('SET', KEYS[1], y) end end",
			"scripts/x.lua:6:28: argument 2 of redis.call is y, which holds nil there: Redis refuses it at run time (command arguments must be strings or numbers)", refusedArg},
	})
}
