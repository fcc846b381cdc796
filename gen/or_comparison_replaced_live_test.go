package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestOrComparisonLocalReplacedAgreesWithServer: a local given an or whose
// left is a comparison (local b = ARGV[1] == 'a' or 'y') and given a
// string in a nested block (if ... then b = 'z' ... end) holds that string
// in the rest of the block: passed to redis.call there it is taken, and
// the server runs it. After the block it may hold the comparison's true
// again: warned of, and the server refuses it on that path.
func TestOrComparisonLocalReplacedAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const refused = "Lua redis lib command arguments must be strings or integers"
	for _, tc := range []struct {
		name, body, want, server string // server: part of Redis's error, "" for none
	}{
		{"in the block", "local b = ARGV[1] == 'a' or 'y'\nif ARGV[1] == 'a' then\nb = 'z'\nredis.call('SET', KEYS[1], b)\nend", "", ""},
		{"in a block within it", "local b = ARGV[1] == 'a' or 'y'\nif ARGV[1] == 'a' then\nb = 'z'\nif b ~= '' then redis.call('SET', KEYS[1], b) end\nend", "", ""},
		{"after the block", "local b = ARGV[1] == 'a' or 'y'\nif ARGV[1] == 'q' then\nb = 'z'\nend\nredis.call('SET', KEYS[1], b)",
			`scripts/x.lua:8:28: warning: argument 2 of redis.call is b, a local that holds a comparison, true or false, on some paths: Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers")`, refused},
		{"given the or again", "local b = ARGV[1] == 'a' or 'y'\nif ARGV[1] == 'a' then\nb = 'z'\nif ARGV[1] ~= '' then b = ARGV[1] == 'a' or 'y' end\nredis.call('SET', KEYS[1], b)\nend",
			`scripts/x.lua:8:28: warning: argument 2 of redis.call is b, a local that holds a comparison, true or false, on some paths: Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers")`, refused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @arg a string\n-- @return none\n" + tc.body + "\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}k"}, "a")
		})
	}
}
