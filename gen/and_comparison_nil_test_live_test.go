package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestAndComparisonNilTestAgreesWithServer: a local given an and whose
// left is a comparison (local b = ARGV[1] == 'q' and 'y') holds false, not
// nil, where the comparison is false: b ~= nil, or type(b) ~= 'nil', is
// true there, so a call under it is still warned of, and the server
// refuses the call. A test of its truth (if b then) is taken.
func TestAndComparisonNilTestAgreesWithServer(t *testing.T) {
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
		{"~= nil", "local b = ARGV[1] == 'q' and 'y'\nif b ~= nil then redis.call('SET', KEYS[1], b) end", "scripts/x.lua:5:45: " + warn, refused},
		{"type ~= 'nil'", "local b = ARGV[1] == 'q' and 'y'\nif type(b) ~= 'nil' then redis.call('SET', KEYS[1], b) end", "scripts/x.lua:5:53: " + warn, refused},
		{"an early exit on == nil", "local b = ARGV[1] == 'q' and 'y'\nif b == nil then return end\nredis.call('SET', KEYS[1], b)", "scripts/x.lua:6:28: " + warn, refused},
		{"its truth", "local b = ARGV[1] == 'q' and 'y'\nif b ~= nil and b then redis.call('SET', KEYS[1], b) end", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @arg a string\n-- @return none\n" + tc.body + "\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}k"}, "a")
		})
	}
}
