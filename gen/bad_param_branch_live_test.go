package gen

import (
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestBadParamBranchAgreesWithServer: a call of a local function that
// passes true, a comparison or a table to a parameter used under a test of
// another parameter (if mode == 'set' then ... v ... end) reaches the use
// only when its values pass that test, as with nil (TestParamBranch...):
// a call that never does (f('get', true)) is no refused call, and the
// server runs the script. One that passes the test is warned of, and the
// server refuses it.
func TestBadParamBranchAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		refused = "Lua redis lib command arguments must be strings or integers"
		warn    = `scripts/x.lua:5:52: warning: argument 2 of redis.call is v, a parameter that a call of its function passes %s: Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers")`
	)
	for _, tc := range []struct {
		name, calls, want, server string
	}{
		{"true, the test failed", "f('get', true)\nf('set', ARGV[1])", "", ""},
		{"a table, the test failed", "f('get', {})\nf('set', ARGV[1])", "", ""},
		{"a comparison, the test failed", "f('get', ARGV[1] == 'a')\nf('set', ARGV[1])", "", ""},
		{"true, the test passed", "f('get', 'x')\nf('set', true)", fmtWarn(warn, "true"), refused},
		{"a table, the test passed", "f('get', 'x')\nf('set', {})", fmtWarn(warn, "a table"), refused},
		{"true, the test unknown", "f(ARGV[1], true)", fmtWarn(warn, "true"), refused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @arg a string\n-- @return none\nlocal function f(mode, v)\n  if mode == 'set' then redis.call('SET', KEYS[1], v) end\nend\n" + tc.calls + "\nredis.call('ECHO', ARGV[1])\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}k"}, "set")
		})
	}
}

// fmtWarn puts what in place of the %s of warn.
func fmtWarn(warn, what string) string { return strings.Replace(warn, "%s", what, 1) }
