package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestOrComparisonLocalTruthTestedAgreesWithServer: a local given an or
// whose left is a comparison (local b = a == c or 'y') holds true where the
// comparison holds; a test of its truth (if b then ... end) rules out nil
// and false but not true, so passing it to redis.call inside is warned of,
// and the server refuses the call when a == c. Likewise a local given true
// on a path, and a parameter a call passes a comparison. A test of its
// type shows a string: taken, and the server runs it.
func TestOrComparisonLocalTruthTestedAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const refused = "Lua redis lib command arguments must be strings or integers"
	warn := func(pos, name string) string {
		return `scripts/x.lua:` + pos + `: warning: argument 2 of redis.call is ` + name + `, a local that holds a comparison, true or false, on some paths: Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers")`
	}
	for _, tc := range []struct {
		name, body, want, server string // server: part of Redis's error, "" for none
	}{
		{"if b", "local b = ARGV[1] == 'a' or 'y'\nif b then redis.call('SET', KEYS[1], b) end", warn("5:38", "b"), refused},
		{"if b and", "local b = ARGV[1] == 'a' or 'y'\nif b and KEYS[1] then redis.call('SET', KEYS[1], b) end", warn("5:50", "b"), refused},
		{"not b returns", "local b = ARGV[1] == 'a' or 'y'\nif not b then return end\nredis.call('SET', KEYS[1], b)", warn("6:28", "b"), refused},
		{"given a value where false", "local b = ARGV[1] == 'a' or 'y'\nif not b then b = 'z' end\nredis.call('SET', KEYS[1], b)", warn("6:28", "b"), refused},
		{"given a value on every path", "local b = ARGV[1] == 'a' or 'y'\nif b then b = 'x' else b = 'z' end\nredis.call('SET', KEYS[1], b)", "", ""},
		{"tested at the break of while true", "local b = ARGV[1] == 'a' or 'y'\nwhile true do if b then break end end\nredis.call('SET', KEYS[1], b)", warn("6:28", "b"), refused},
		{"given a value at the break of while true", "local b = ARGV[1] == 'a' or 'y'\nwhile true do b = 'x' break end\nredis.call('SET', KEYS[1], b)", "", ""},
		{"b ~= nil", "local b = ARGV[1] == 'a' or 'y'\nif b ~= nil then redis.call('SET', KEYS[1], b) end", warn("5:45", "b"), refused},
		{"b ~= false", "local b = ARGV[1] == 'a' or 'y'\nif b ~= false then redis.call('SET', KEYS[1], b) end", warn("5:47", "b"), refused},
		{"b == true", "local b = ARGV[1] == 'a' or 'y'\nif b == true then return end\nredis.call('SET', KEYS[1], b)", "", ""},
		{"a copy tested", "local b = ARGV[1] == 'a' or 'y'\nlocal c = b\nif c then redis.call('SET', KEYS[1], c) end", warn("6:38", "c"), refused},
		{"true on a path", "local b = 'x'\nif ARGV[1] == 'a' then b = true end\nif b then redis.call('SET', KEYS[1], b) end",
			`scripts/x.lua:6:38: warning: argument 2 of redis.call is b, a local that holds true, on some paths: Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers")`, refused},
		{"a parameter", "local function f(v) if v then redis.call('SET', KEYS[1], v) end end\nf(ARGV[1] == 'a')",
			`scripts/x.lua:4:58: warning: argument 2 of redis.call is v, a parameter that a call of its function passes a comparison, true or false: Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers")`, refused},
		{"type tested", "local b = ARGV[1] == 'a' or 'y'\nif b and type(b) == 'string' then redis.call('SET', KEYS[1], b) end", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @arg a string\n-- @return none\n" + tc.body + "\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}k"}, "a")
		})
	}
}
