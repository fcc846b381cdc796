package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestAndComparisonLocalAgreesWithServer: a local given an and whose left
// is a comparison (local b = ARGV[1] == 'q' and 'y') holds false where the
// comparison is false: passed to redis.call untested it is warned of, and
// the server refuses the call there. Tested first (if b then), given
// another value, or given an and/or that ends in a string, it is taken,
// and the server runs the script.
func TestAndComparisonLocalAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		refused = "Lua redis lib command arguments must be strings or integers"
		warn    = `warning: argument 2 of redis.call is b, a local that may hold nil or false there (declared without a value, or assigned nil or false, and given one only on some paths): Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers"); give it a value on every path, or test it first (if b then ... end)`
	)
	for _, tc := range []struct {
		name, body, want, server string // server: part of Redis's error, "" for none
	}{
		{"a comparison", "local b = ARGV[1] == 'q' and 'y'\nredis.call('SET', KEYS[1], b)", "scripts/x.lua:5:28: " + warn, refused},
		{"a negation", "local b = not ARGV[1] and 'y'\nredis.call('SET', KEYS[1], b)", "scripts/x.lua:5:28: " + warn, refused},
		{"given in an if", "local b = 'z'\nif ARGV[1] ~= '' then b = ARGV[1] == 'q' and 'y' end\nredis.call('SET', KEYS[1], b)", "scripts/x.lua:6:28: " + warn, refused},
		{"tested first", "local b = ARGV[1] == 'q' and 'y'\nif b then redis.call('SET', KEYS[1], b) end", "", ""},
		{"given another value", "local b = ARGV[1] == 'q' and 'y'\nb = 'z'\nredis.call('SET', KEYS[1], b)", "", ""},
		{"given a value on every path of an if", "local b = ARGV[1] == 'q' and 'y'\nif ARGV[1] == 'a' then b = 'p' else b = 'r' end\nredis.call('SET', KEYS[1], b)", "", ""},
		{"given it again in an if's branch", "local b = 'p'\nif ARGV[1] == 'q' then b = 'r' else b = ARGV[1] == 'q' and 'y' end\nredis.call('SET', KEYS[1], b)", "scripts/x.lua:6:28: " + warn, refused},
		{"ended by an or", "local b = ARGV[1] == 'q' and 'y' or 'n'\nredis.call('SET', KEYS[1], b)", "", ""},
		{"an and of an arg", "local b = ARGV[1] and 'y'\nredis.call('SET', KEYS[1], b)", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @arg a string\n-- @return none\n" + tc.body + "\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}k"}, "a")
		})
	}
}
