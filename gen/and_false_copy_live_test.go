package gen

import (
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestAndFalseCopyAgreesWithServer: a local given an and whose left is a
// comparison (local a = ARGV[1] == 'y' and 'x') holds false where the
// comparison fails, and so does a copy of it (local b = a), or a copy of
// the copy: passed to redis.call it is warned of as the local itself is,
// and the server refuses the call. A copy made where a test shows the
// local to hold a value, or of a local given another value, is taken, and
// the server runs it.
func TestAndFalseCopyAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		refused = "Lua redis lib command arguments must be strings or integers"
		warn    = `scripts/x.lua:%s: warning: argument 2 of redis.call is b, a local that may hold nil or false there (declared without a value, or assigned nil or false, and given one only on some paths): Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers"); give it a value on every path, or test it first (if b then ... end)`
	)
	for _, tc := range []struct {
		name, body, at, server string // at: line:col of the warning, "" for none
	}{
		{"a copy", "local b = a\nredis.call('SET', KEYS[1], b)", "6:28", refused},
		{"a copy assigned", "local b = 'z'\nb = a\nredis.call('SET', KEYS[1], b)", "7:28", refused},
		{"a copy of a copy", "local c = a\nlocal b = c\nredis.call('SET', KEYS[1], b)", "7:28", refused},
		{"a copy under a test", "if a then\n  local b = a\n  redis.call('SET', KEYS[1], b)\nend", "", ""},
		{"a copy after a test", "if not a then return end\nlocal b = a\nredis.call('SET', KEYS[1], b)", "", ""},
		{"a copy given a default", "local b = a or 'w'\nredis.call('SET', KEYS[1], b)", "", ""},
		{"a copy of a local given a value", "a = 'w'\nlocal b = a\nredis.call('SET', KEYS[1], b)", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @arg a string\n-- @return none\nlocal a = ARGV[1] == 'y' and 'x'\n" + tc.body + "\n"
			want := ""
			if tc.at != "" {
				want = strings.Replace(warn, "%s", tc.at, 1)
			}
			checkAndRun(t, rc, src, want, tc.server, []string{"{t}k"}, "n")
		})
	}
}
