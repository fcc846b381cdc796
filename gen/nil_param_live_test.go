package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestNilParamAgreesWithServer: a parameter of a local function that a
// call passes nil or false, or no value at all, is nil or false in that
// call, and passed to redis.call untested there the server refuses the
// call: the checker warns of it. Tested first, or passed so only by a call
// in a function the script never runs, or of a function the script also
// assigns (which that call runs instead), it is taken without a warning.
func TestNilParamAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		refused = "Lua redis lib command arguments must be strings or integers"
		warn    = `scripts/x.lua:4:48: warning: argument 2 of redis.call is v, a parameter that a call of its function passes nil or false (f(nil), f(false), or no value there): Redis refuses the call at run time on that call ("Lua redis lib command arguments must be strings or integers"); pass a value, or test it first (if v then ... end)`
		set     = "local function f(v) redis.call('SET', KEYS[1], v) end\n"
	)
	for _, tc := range []struct {
		name, body, want, server string // server: part of Redis's error, "" for none
	}{
		{"nil", set + "f('x')\nf(nil)", warn, refused},
		{"false", set + "f('x')\nf(false)", warn, refused},
		{"no value", set + "f('x')\nf()", warn, refused},
		{"tested", "local function f(v) if v then redis.call('SET', KEYS[1], v) end end\nf('x')\nf()", "", ""},
		{"a default", "local function f(v) redis.call('SET', KEYS[1], v or 'z') end\nf('x')\nf()", "", ""},
		{"in a function never run", set + "f('x')\nlocal function g() f() end", "", ""},
		{"a function assigned", set + "f('x')\nf = function(v) end\nf()", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @return none\n\n" + tc.body + "\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}k"})
		})
	}
}
