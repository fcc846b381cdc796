package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestReturnedCountOnPathsAgreesWithServer: a call of a local function
// written last in redis.call whose paths return different numbers of values
// (an if and its else, a return on some paths only, none at the end) gives
// the command each of those counts on some path. A count the command does
// not take is warned of, an error when no count suits it, and the server
// refuses the call on a path that passes it ("wrong number of arguments").
// Counts the command takes on every path are accepted, and run.
func TestReturnedCountOnPathsAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		head    = "-- @key k\n-- @arg a string\n-- @return none\nredis.call('SET', KEYS[1], ARGV[1])\n"
		arity   = "Wrong number of args calling Redis command from script"
		because = " (its last argument is a call of a local function whose paths return different numbers of values)"
	)
	for _, tc := range []struct {
		name, body, want, server string // server: part of Redis's error, "" for none
	}{
		{"an if and its else", "local function f(c) if c then return KEYS[1], 'x' else return KEYS[1] end end\nredis.call('GET', f(redis.call('EXISTS', KEYS[1]) == 1))",
			"scripts/x.lua:6:12: warning: wrong number of arguments for GET: it takes 1 argument, the call passes 1 or 2" + because + ": Redis refuses the call at run time on the paths that pass 2", arity},
		{"an early return of nothing", "local function f(c) if c then return end return KEYS[1] end\nredis.call('GET', f(redis.call('EXISTS', KEYS[1]) == 1))",
			"scripts/x.lua:6:12: warning: wrong number of arguments for GET: it takes 1 argument, the call passes 0 or 1" + because + ": Redis refuses the call at run time on the paths that pass 0", arity},
		{"no return at the end", "local function f(c) if c then return KEYS[1] end end\nredis.call('GET', f(redis.call('EXISTS', KEYS[1]) == 0))",
			"scripts/x.lua:6:12: warning: wrong number of arguments for GET: it takes 1 argument, the call passes 0 or 1" + because + ": Redis refuses the call at run time on the paths that pass 0", arity},
		{"no count suits", "local function f(c) if c then return KEYS[1], 'x' end return KEYS[1], 'x', 'y' end\nredis.call('GET', f(redis.call('EXISTS', KEYS[1]) == 1))",
			"scripts/x.lua:6:12: wrong number of arguments for GET: it takes 1 argument, the call passes 2 or 3" + because, arity},
		{"every count suits", "local function f(c) if c then return KEYS[1] end return KEYS[1], KEYS[1] end\nredis.call('DEL', f(redis.call('EXISTS', KEYS[1]) == 1))", "", ""},
		{"an if and its else, the same count", "local function f(c) if c then return KEYS[1], 'x' else return KEYS[1], 'y' end end\nredis.call('SET', f(redis.call('EXISTS', KEYS[1]) == 1))", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkAndRun(t, rc, head+tc.body+"\n", tc.want, tc.server, []string{"{t}k"}, "v")
		})
	}
}
