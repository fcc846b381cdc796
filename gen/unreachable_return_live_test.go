package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestUnreachableReturnAgreesWithServer: a return no run reaches (after
// error(...), after a return in the same block, in the body of if false or
// of while nil) gives a call of its function nothing: the options, the
// argument count and the values Redis refuses are checked with the returns
// a run may reach only. Such correct scripts are taken, and the server runs
// them; a reachable return that gives PX without its value is still
// warned of, and the server refuses that path.
func TestUnreachableReturnAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		syntax  = "syntax error"
		novalue = `scripts/x.lua:5:33: warning: SET's option PX takes a value after it, and the call gives 0: Redis refuses the call ("ERR syntax error"), on the paths where the last argument, a call of a local function, gives those values`
		tail    = "return 'PX', ARGV[1] end\nredis.call('SET', KEYS[1], 'v', f())"
	)
	for _, tc := range []struct {
		name, fn, want, server string // server: part of Redis's error, "" for none
	}{
		{"after error", "if ARGV[1] == '1' then return 'PX', '100' end error('no') return 'PX' end\nredis.call('SET', KEYS[1], 'v', f())", "", ""},
		{"in if false", "if false then return 'PX' end " + tail, "", ""},
		{"in if nil", "if nil then return 'PX' end " + tail, "", ""},
		{"in while false", "while false do return 'PX' end " + tail, "", ""},
		{"after error in a branch", "if ARGV[1] == '2' then error('no') return 'PX' end " + tail, "", ""},
		{"a table after error", "if ARGV[1] == '1' then return '100' end error('no') return {} end\nredis.call('SET', KEYS[1], f())", "", ""},
		{"nothing after error", "if ARGV[1] == '1' then return '100' end error('no') return end\nredis.call('SET', KEYS[1], f())", "", ""},
		{"reachable", "if ARGV[1] == '1' then return 'PX' end " + tail, novalue, syntax},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @arg a string\n-- @return none\nlocal function f() " + tc.fn + "\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}k"}, "1")
		})
	}
}
