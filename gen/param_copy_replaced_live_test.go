package gen

import (
	"testing"
)

// TestParamCopyReplacedAgreesWithServer: a local given a parameter (local y
// = v) keeps the parameter's value when the parameter is replaced: a test
// of the parameter made before it is replaced (if v then v = v .. ':x'
// ... end) still shows the copy holds a value, and the script is taken
// and runs; a test made after it is replaced shows nothing of the copy,
// which is warned of, and the server refuses the call when it is nil.
func TestParamCopyReplacedAgreesWithServer(t *testing.T) {
	t.Parallel()
	const (
		nilArg = `scripts/x.lua:5:38: warning: argument 2 of redis.call is y, a parameter that a call of its function passes nil or false (f(nil), f(false), or no value there): Redis refuses the call at run time on that call ("Lua redis lib command arguments must be strings or integers"); pass a value, or test it first (if y then ... end)`
	)
	checkLiveCases(t, "-- @key k\n-- @return none\n", "\nf('x')\nf(nil)\n", []string{"{t}k"}, nil, []liveCase{
		{"tested, then replaced", "local function f(v) local y = v\nif v then v = v .. ':x'\nredis.call('SET', KEYS[1], y) end end", "", ""},
		{"tested, then replaced in a nested block", "local function f(v) local y = v\nif v then if y ~= '' then v = 'z' end\nredis.call('SET', KEYS[1], y) end end", "", ""},
		{"replaced, then tested", "local function f(v) local y = v\nv = 'x'\nif v then redis.call('SET', KEYS[1], y) end end", nilArg, refusedArg},
	})
}
