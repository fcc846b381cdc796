package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestUnreachableReturnErrorLocalAgreesWithServer: where the script
// declares a local named error (local function error() end), a call of
// error(...) is that local's, which may return: the returns after it are
// reached, their options are checked, and the server refuses the call on
// the path that gives PX without its value. Lua's own error still ends the
// path where no such local is in scope (a parameter of another function).
func TestUnreachableReturnErrorLocalAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		fn      = "local function f() if ARGV[1] == '1' then return 'PX', '100' end error('no') return 'PX' end\nredis.call('SET', KEYS[1], 'v', f())"
		novalue = `scripts/x.lua:6:33: warning: SET's option PX takes a value after it, and the call gives 0: Redis refuses the call ("ERR syntax error"), on the paths where the last argument, a call of a local function, gives those values`
	)
	for _, tc := range []struct {
		name, decl, want, server string // server: part of Redis's error, "" for none
	}{
		{"a local function error", "local function error() end", novalue, "syntax error"},
		{"a local error given a function", "local error = function(m) return m end", novalue, "syntax error"},
		{"a parameter named error of another function", "local function g(error) return error end", "", "no"},
		{"Lua's error", "local e = 1", "", "no"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @arg a string\n-- @return none\n" + tc.decl + "\n" + fn + "\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}k"}, "2")
		})
	}
}
