package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestParamEarlyExitAgreesWithServer: a parameter of a local function used
// after an early exit on a test of another parameter (if mode ~= 'set'
// then return end) is used only by the calls whose values pass that test:
// a call passing nil for it and a value that leaves (f('get')) never
// reaches the use. Such correct scripts are taken, and the server runs
// them. A call that reaches the use passing nil, or an if that does not
// leave, is warned of, and the server refuses the call.
func TestParamEarlyExitAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		refused = "Lua redis lib command arguments must be strings or integers"
		warn    = `warning: argument 2 of redis.call is v, a parameter that a call of its function passes nil or false (f(nil), f(false), or no value there): Redis refuses the call at run time on that call ("Lua redis lib command arguments must be strings or integers"); pass a value, or test it first (if v then ... end)`
	)
	for _, tc := range []struct {
		name, body, want, server string // server: part of Redis's error, "" for none
	}{
		{"~= a string, then return", "if mode ~= 'set' then return end\nredis.call('SET', KEYS[1], v)\nend\nf('get')\nf('set', ARGV[1])", "", ""},
		{"not its truth, then return", "if not mode then return end\nredis.call('SET', KEYS[1], v)\nend\nf()\nf('x', ARGV[1])", "", ""},
		{"in the else", "if mode == 'set' then redis.call('DEL', KEYS[1]) else return end\nredis.call('SET', KEYS[1], v)\nend\nf('get')\nf('set', ARGV[1])", "", ""},
		{"a call that passes it", "if mode == 'get' then return end\nredis.call('SET', KEYS[1], v)\nend\nf('get')\nf('x')\nredis.call('SET', KEYS[1], ARGV[1])", "scripts/x.lua:6:28: " + warn, refused},
		{"an if that does not leave", "if mode ~= 'set' then redis.call('DEL', KEYS[1]) end\nredis.call('SET', KEYS[1], v)\nend\nf('get')\nf('set', ARGV[1])", "scripts/x.lua:6:28: " + warn, refused},
		{"after the block it leaves in", "if ARGV[1] == '' then\nif mode ~= 'set' then return end\nend\nredis.call('SET', KEYS[1], v)\nend\nf('get')\nf('set', ARGV[1])", "scripts/x.lua:8:28: " + warn, refused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @arg a string\n-- @return none\nlocal function f(mode, v)\n" + tc.body + "\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}k"}, "a")
		})
	}
}
