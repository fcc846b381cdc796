package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestParamGivenOnPathsAgreesWithServer: a local of a local function given
// a parameter on some paths only (local y = 'a'; if c then y = v end), or
// after its declaration, holds what a call passes the parameter on those
// paths: nil or false a call passes it, passed on to redis.call untested,
// is warned of, and the server refuses the call on that path. Tested
// first (if y then), or given a value again after, it is taken, and the
// server runs the script.
func TestParamGivenOnPathsAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		refused = "Lua redis lib command arguments must be strings or integers"
		warn    = `warning: argument 2 of redis.call is y, a local given the parameter v, which a call of its function passes nil or false (f(nil), f(false), or no value there): Redis refuses the call at run time on that call ("Lua redis lib command arguments must be strings or integers"); pass a value, or test it first (if y then ... end)`
	)
	for _, tc := range []struct {
		name, body, want, server string // server: part of Redis's error, "" for none
	}{
		{"in an if", "local y = 'a'\nif ARGV[1] == 'a' then y = v end\nredis.call('SET', KEYS[1], y)\nend\nf(nil)", "scripts/x.lua:7:28: " + warn, refused},
		{"after its declaration", "local y\ny = v\nredis.call('SET', KEYS[1], y)\nend\nf(false)\nredis.call('SET', KEYS[1], ARGV[1])", "scripts/x.lua:7:28: " + warn, refused},
		{"in a loop", "local y = 'a'\nfor i = 1, 2 do\nredis.call('SET', KEYS[1], y)\ny = v\nend\nend\nf()\nredis.call('SET', KEYS[1], ARGV[1])", "scripts/x.lua:7:28: " + warn, refused},
		{"tested first", "local y = 'a'\nif ARGV[1] == 'a' then y = v end\nif y then redis.call('SET', KEYS[1], y) end\nend\nf(nil)", "", ""},
		{"given a value again", "local y = 'a'\nif ARGV[1] == 'a' then y = v end\ny = 'b'\nredis.call('SET', KEYS[1], y)\nend\nf(nil)", "", ""},
		{"passed a value", "local y = 'a'\nif ARGV[1] == 'a' then y = v end\nredis.call('SET', KEYS[1], y)\nend\nf('x')", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @arg a string\n-- @return none\nlocal function f(v)\n" + tc.body + "\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}k"}, "a")
		})
	}
}
