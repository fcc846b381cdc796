package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestParamBranchReplyAgreesWithServer: a command's reply passed to a local
// function whose use of that parameter is under a test of another
// parameter (if mode == 'set' then ... v .. 'x' ... end) is checked only
// for the calls whose values pass that test: a call passing the reply
// with a value that fails it (f('get', redis.call('GET', k))) never
// reaches the use. Such correct scripts are taken, and the server runs
// them; a call that reaches the use with the reply is warned of, and Lua
// fails the script there.
func TestParamBranchReplyAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const warn = `scripts/x.lua:5:52: warning: concatenation (..) of v (the reply of GET a call passes it), which is false when GET replies nil: Lua fails the script at run time ("attempt to concatenate local 'v' (a boolean value)"); test v first (if not v then ... end), or give it a default where it is assigned (redis.call(...) or '')`
	for _, tc := range []struct {
		name, calls, want, server string // server: part of Redis's error, "" for none
	}{
		{"passed with a value that fails the test", "f('get', redis.call('GET', KEYS[1]))\nf('set', ARGV[1])", "", ""},
		{"passed with one that passes it", "f('set', redis.call('GET', KEYS[1]))\nf('get', ARGV[1])", warn, "attempt to concatenate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @arg a string\n-- @return none\nlocal function f(mode, v)\nif mode == 'set' then redis.call('SET', KEYS[1], v .. 'x') end\nend\n" + tc.calls + "\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}missing-" + tc.name}, "a")
		})
	}
}
