package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestParamBranchUnseenCallAgreesWithServer: a use of a parameter under a
// test of another (if mode == 'set' then ... v ... end) is met by every
// call the checker cannot read, one through another name (local g = f;
// g('set')), or passing values of unpack or of a call (f(unpack(t))):
// such a call may pass the test and nil, and the server refuses the
// command there. A call passing nil that fails the test (f('get')) does
// not make the others safe.
func TestParamBranchUnseenCallAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		refused = "Lua redis lib command arguments must be strings or integers"
		warn    = `scripts/x.lua:5:50: warning: argument 2 of redis.call is v, a parameter that a call of its function passes nil or false (f(nil), f(false), or no value there): Redis refuses the call at run time on that call ("Lua redis lib command arguments must be strings or integers"); pass a value, or test it first (if v then ... end)`
		concat  = `scripts/x.lua:5:52: warning: concatenation (..) of v (the reply of GET a call passes it), which is false when GET replies nil: Lua fails the script at run time ("attempt to concatenate local 'v' (a boolean value)"); test v first (if not v then ... end), or give it a default where it is assigned (redis.call(...) or '')`
	)
	for _, tc := range []struct {
		name, use, calls, want, server string // server: part of Redis's error, "" for none
	}{
		{"through another name", "v", "f('get')\nlocal g = f\ng('set')\nredis.call('SET', KEYS[1], ARGV[1])", warn, refused},
		{"passing unpack's values", "v", "f('get')\nlocal t = {'set'}\nf(unpack(t))\nredis.call('SET', KEYS[1], ARGV[1])", warn, refused},
		{"passing a call's values", "v", "f('get')\nf((function() return 'set' end)())\nredis.call('SET', KEYS[1], ARGV[1])", warn, refused},
		{"a reply through another name", "v .. 'x'", "f('get', redis.call('GET', KEYS[1]))\nlocal g = f\ng('set', redis.call('GET', KEYS[1]))\nredis.call('SET', KEYS[1], ARGV[1])", concat, "attempt to concatenate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @arg a string\n-- @return none\nlocal function f(mode, v)\nif mode == 'set' then redis.call('SET', KEYS[1], " + tc.use + ") end\nend\n" + tc.calls + "\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}missing-" + tc.name}, "a")
		})
	}
}
