package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestParamAssignedNilAgreesWithServer: a parameter given another value
// holds that value from then on, whatever a test of it showed before: one
// given nil after if not v then return end (on every path, or on some),
// or in the body of if v, is refused or warned of as a local holding nil
// there, and the server refuses the call or fails the script. One given a
// value (a default where it is nil, v or ..., a concatenation) is taken,
// and the server runs the script.
func TestParamAssignedNilAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		head    = "-- @key k\n-- @arg a string\n-- @return none\nlocal function f(v)\n"
		refused = "Lua redis lib command arguments must be strings or integers"
		failed  = "attempt to concatenate local 'v' (a nil value)"
		holds   = `scripts/x.lua:7:30: argument 2 of redis.call is v, which holds nil there: Redis refuses it at run time (command arguments must be strings or numbers)`
		mayNil  = `scripts/x.lua:7:30: warning: argument 2 of redis.call is v, a local that may hold nil or false there (declared without a value, or assigned nil or false, and given one only on some paths): Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers"); give it a value on every path, or test it first (if v then ... end)`
		concat  = `scripts/x.lua:7:36: warning: concatenation (..) of v, a local that may hold nil or false there (declared without a value, or assigned nil or false, and given one only on some paths): Lua fails the script at run time on those paths ("attempt to concatenate local 'v' (a nil value)"); give it a value on every path, or test it first (if v then ... end)`
	)
	for _, tc := range []struct {
		name, body, call, want, server string
	}{
		{"given nil after an exit on it", "  if not v then return end\n  v = nil\n  redis.call('SET', KEYS[1], v, ARGV[1])\n", "f('a')", holds, refused},
		{"given nil on some paths after an exit on it", "  if not v then return end\n  if ARGV[1] == 'a' then v = nil end\n  redis.call('SET', KEYS[1], v)\n", "f('a')", mayNil, refused},
		{"given nil in the body of if v", "  if v then\n    if ARGV[1] == 'a' then v = nil end\n    redis.call('SET', KEYS[1], 'p' .. v)\n  end\n", "f('a')", concat, failed},
		{"given a default where it is nil", "  if not v then v = ARGV[1] end\n  redis.call('ECHO', 'x')\n  redis.call('SET', KEYS[1], v)\n", "f(nil)", "", ""},
		{"given v or a default", "  v = v or ARGV[1]\n  redis.call('ECHO', 'x')\n  redis.call('SET', KEYS[1], v)\n", "f(nil)", "", ""},
		{"given a concatenation after an exit on it", "  if not v then return end\n  v = v .. ARGV[1]\n  redis.call('SET', KEYS[1], v)\n", "f('a')", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := head + tc.body + "end\n" + tc.call + "\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}k"}, "a")
		})
	}
}
