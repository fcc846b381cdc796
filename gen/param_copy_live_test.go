package gen

import (
	"testing"
)

// TestParamCopyAgreesWithServer: a local given a parameter of its function
// (local y = v) holds what each call passes it: nil (f(nil)) or a command's
// reply that may be nil, passed to redis.call or concatenated untested
// there, fails the script on the server as the parameter itself would,
// and the checker warns of it. Tested first (the copy or the parameter,
// before or after the copy), it is taken without a warning, and the
// server runs it.
func TestParamCopyAgreesWithServer(t *testing.T) {
	t.Parallel()
	const (
		nilArg = `scripts/x.lua:5:28: warning: argument 2 of redis.call is y, a parameter that a call of its function passes nil or false (f(nil), f(false), or no value there): Redis refuses the call at run time on that call ("Lua redis lib command arguments must be strings or integers"); pass a value, or test it first (if y then ... end)`
		concat = `scripts/x.lua:5:30: warning: concatenation (..) of y (the reply of GET a call passes it), which is false when GET replies nil: Lua fails the script at run time ("attempt to concatenate local 'y' (a boolean value)"); test y first (if not y then ... end), or give it a default where it is assigned (redis.call(...) or '')`
		get    = "f(redis.call('GET', KEYS[2]))"
	)
	checkLiveCases(t, "-- @key k\n-- @key k2\n-- @return none\n", "\nredis.call('DEL', KEYS[2])\n", []string{"{t}k", "{t}missing"}, nil, []liveCase{
		{"nil passed", "local function f(v) local y = v\nredis.call('SET', KEYS[1], y) end\nf('x')\nf(nil)", nilArg, refusedArg},
		{"a nil reply passed, concatenated", "local function f(v) local y = v\nredis.call('SET', KEYS[1], y .. 'x') end\n" + get, concat, "attempt to concatenate local 'y' (a boolean value)"},
		{"the copy tested", "local function f(v) local y = v\nif y then redis.call('SET', KEYS[1], y .. 'x') end end\n" + get, "", ""},
		{"the parameter tested after the copy", "local function f(v) local y = v\nif v then redis.call('SET', KEYS[1], y) end end\nf('x')\nf(nil)", "", ""},
		{"copied where tested", "local function f(v) if v then\nlocal y = v redis.call('SET', KEYS[1], y) end end\nf('x')\nf(nil)", "", ""},
		{"the copy given a default", "local function f(v) local y = v or 'z'\nredis.call('SET', KEYS[1], y) end\nf('x')\nf(nil)", "", ""},
	})
}
