package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestLocalPastReturnedValuesAgreesWithServer: locals given a call of a
// local function (local a, b = f()) past the values each of its returns
// gives hold nil, as those past a value written in place (local a, b =
// 'x') do: passed to redis.call, Redis refuses them ("Lua redis lib command
// arguments must be strings or integers"), and the checker must too. A
// local the returns give a value is accepted, and the server runs it.
func TestLocalPastReturnedValuesAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		refused = "Lua redis lib command arguments must be strings or integers"
		c       = "redis.call('EXISTS', KEYS[1]) == 1"
	)
	for _, tc := range []struct {
		name, fn, decl, arg, want, server string // server: part of Redis's error, "" for none
	}{
		{"one value", "return 'x'", "local a, b = f()", "b", "scripts/x.lua:6:28: argument 2 of redis.call is b, which holds nil there: Redis refuses it at run time (command arguments must be strings or numbers)", refused},
		{"two values, on each path", "if " + c + " then return 'x', 'y' else return 'x', 'z' end", "local a, b, d = f()", "d", "scripts/x.lua:6:28: argument 2 of redis.call is d, which holds nil there: Redis refuses it at run time (command arguments must be strings or numbers)", refused},
		{"nothing", "redis.call('DEL', KEYS[1])", "local a, b = 'x', f()", "b", "scripts/x.lua:6:28: argument 2 of redis.call is b, which holds nil there: Redis refuses it at run time (command arguments must be strings or numbers)", refused},
		{"the values given", "if " + c + " then return 'x', 'y' else return 'x', 'z' end", "local a, b = f()", "b", "", ""},
		{"after a value written in place", "return 'x', 'y'", "local a, b, d = 'w', f()", "d", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @return none\nlocal function f() " + tc.fn + " end\n" + tc.decl + "\nredis.call('DEL', KEYS[1])\nredis.call('SET', KEYS[1], " + tc.arg + ")\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}k"})
		})
	}
}
