package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestOrComparisonLocalAgreesWithServer: a local given an or whose left
// is a comparison (local b = ARGV[1] == 'a' or 'y') holds true where the
// comparison holds, which Redis refuses as a command argument: the
// checker warns of it, and the server refuses the call on that path. The
// usual a == c and 'x' or 'y' never gives the comparison, and a local
// tested first is passed only where the test shows a string: the server
// runs both.
func TestOrComparisonLocalAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		refused = "Lua redis lib command arguments must be strings or integers"
		warn    = `scripts/x.lua:5:28: warning: argument 2 of redis.call is b, a local that holds a comparison, true or false, on some paths: Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers")`
	)
	for _, tc := range []struct {
		name, body, want, server string // server: part of Redis's error, "" for none
	}{
		{"or", "local b = ARGV[1] == 'a' or 'y'\nredis.call('SET', KEYS[1], b)", warn, refused},
		{"a copy", "local b = ARGV[1] == 'a' or 'y'\nlocal c = b redis.call('SET', KEYS[1], c)", `scripts/x.lua:5:40: warning: argument 2 of redis.call is c, a local that holds a comparison, true or false, on some paths: Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers")`, refused},
		{"and, or", "local b = ARGV[1] == 'a' and 'x' or 'y'\nredis.call('SET', KEYS[1], b)", "", ""},
		{"tested", "local b = ARGV[1] == 'a' or 'y'\nif type(b) == 'string' then redis.call('SET', KEYS[1], b) end", "", ""},
		{"given a string after", "local b = ARGV[1] == 'a' or 'y'\nb = 'z' redis.call('SET', KEYS[1], b)", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @arg a string\n-- @return none\n" + tc.body + "\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}k"}, "a")
		})
	}
}
