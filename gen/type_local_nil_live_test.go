package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestTypeLocalNilTestAgreesWithServer: a local given the type of a
// parameter (local t = type(v)) and compared with 'nil' tests the
// parameter for nil, as type(v) == 'nil' does: a function that returns
// there passes it to redis.call only where it holds a value, and the
// server runs a call passing nil. The type of another parameter tests
// only that one: the checker warns, and the server refuses the call.
// Of a reply, which is never nil, t == 'nil' is always false, as type(r)
// == 'nil' is: refused.
func TestTypeLocalNilTestAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		refused = "Lua redis lib command arguments must be strings or integers"
		calls   = "\nf('x')\nf(nil)"
	)
	for _, tc := range []struct {
		name, body, want, server string // server: part of Redis's error, "" for none
	}{
		{"an early return", "local function f(v) local t = type(v) if t == 'nil' then return end redis.call('SET', KEYS[1], v) end" + calls, "", ""},
		{"'nil' on the left", "local function f(v) local t = type(v) if 'nil' == t then return end redis.call('SET', KEYS[1], v) end" + calls, "", ""},
		{"~= 'nil'", "local function f(v) local t = type(v) if t ~= 'nil' then redis.call('SET', KEYS[1], v) end end" + calls, "", ""},
		{"== 'string'", "local function f(v) local t = type(v) if t == 'string' then redis.call('SET', KEYS[1], v) end end" + calls, "", ""},
		{"the type of another parameter", "local function f(v, c) local t = type(c) if t == 'nil' then return end redis.call('SET', KEYS[1], v) end\nf('x', 'y')\nf(nil, 'y')",
			`scripts/x.lua:3:99: warning: argument 2 of redis.call is v, a parameter that a call of its function passes nil or false (f(nil), f(false), or no value there): Redis refuses the call at run time on that call ("Lua redis lib command arguments must be strings or integers"); pass a value, or test it first (if v then ... end)`, refused},
		{"a reply", "local r = redis.call('GET', KEYS[1])\nlocal t = type(r)\nif t == 'nil' then return end\nredis.call('SET', KEYS[1], r)",
			"scripts/x.lua:5:6: == compares r (the reply of GET) with nil, but a reply is never nil (Redis turns a nil reply into false): it is always false; test it with not, or compare with false", refused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @return none\n" + tc.body + "\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}missing:" + tc.name})
		})
	}
}
