package gen

import (
	"strconv"
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestComparisonLocalArgAgreesWithServer: a local holding a comparison
// (local b = a == c, not v, a copy of one) is true or false, which Redis
// refuses as a command argument: the checker refuses it passed to
// redis.call, and warns of one that holds a comparison on some paths only.
// One an if gives a string on every path holds no comparison after it, and
// one the script tests first (type(b) == 'boolean', b == true) may be
// passed only where the test shows it a string.
func TestComparisonLocalArgAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		refused = "Lua redis lib command arguments must be strings or integers"
		always  = `scripts/x.lua:%d:28: argument 2 of redis.call is %s, which holds a comparison, true or false: Redis refuses it at run time (command arguments must be strings or numbers)`
		some    = `scripts/x.lua:%d:28: warning: argument 2 of redis.call is b, a local that holds a comparison, true or false, on some paths: Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers")`
	)
	for _, tc := range []struct {
		name, body, want, server string // want: %d is the use's line
	}{
		{"an equality", "local b = ARGV[1] == 'x'\nredis.call('SET', KEYS[1], b)", strings.Replace(always, "%s", "b", 1), refused},
		{"a not", "local b = not ARGV[1]\nredis.call('SET', KEYS[1], b)", strings.Replace(always, "%s", "b", 1), refused},
		{"a copy", "local b = ARGV[1] ~= 'x'\nlocal c = b\nredis.call('SET', KEYS[1], c)", strings.Replace(always, "%s", "c", 1), refused},
		{"on some paths", "local b = 'x'\nif ARGV[1] == '1' then b = ARGV[1] == 'x' end\nredis.call('SET', KEYS[1], b)", some, refused},
		// Tested first, it may be passed only where the test shows it a
		// string.
		{"on some paths, converted where its type is boolean", "local b = 'x'\nif ARGV[1] == '1' then b = ARGV[1] == 'x' end\nif type(b) == 'boolean' then b = tostring(b) end\nredis.call('SET', KEYS[1], b)", "", ""},
		{"on some paths, passed where it is no boolean", "local b = 'x'\nif ARGV[1] == '1' then b = true end\nif b == true then redis.call('SET', KEYS[1], '1') else redis.call('SET', KEYS[1], b) end", "", ""},
		{"a string on every path after it", "local b = ARGV[1] == 'x'\nif b then b = 'y' else b = 'z' end\nredis.call('SET', KEYS[1], b)", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @arg a string\n-- @return none\n" + tc.body + "\n"
			want := tc.want
			if want != "" {
				want = strings.Replace(want, "%d", strconv.Itoa(strings.Count(src, "\n")), 1)
			}
			checkAndRun(t, rc, src, want, tc.server, []string{"{t}k"}, "1")
		})
	}
}
