package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestReturnedCountEndlessLoopAgreesWithServer: a local function whose body
// ends in a loop left by no break (while true do ... end, repeat ... until
// false) never reaches its end, which gives no value: called last in
// redis.call, it passes only what its returns give, and a command that
// takes that count runs on the server without a warning (-strict refuses
// warnings). With a break, the end is reached, and the call that passes
// nothing is warned of, which the server refuses.
func TestReturnedCountEndlessLoopAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		head  = "-- @key k\n-- @arg a string\n-- @return none\nredis.call('SET', KEYS[1], ARGV[1])\n"
		found = "if redis.call('EXISTS', KEYS[1]) == 1 then return KEYS[1], 'x' end redis.call('SET', KEYS[1], 'v')"
		arity = "Wrong number of args calling Redis command from script"
	)
	for _, tc := range []struct {
		name, body, want, server string // server: part of Redis's error, "" for none
	}{
		{"while true", "local function f() while true do " + found + " end end\nredis.call('SET', f())", "", ""},
		{"repeat until false", "local function f() repeat " + found + " until false end\nredis.call('SET', f())", "", ""},
		{"while true, after a call", "local function f() redis.call('DEL', KEYS[1]) while true do " + found + " end end\nredis.call('SET', f())", "", ""},
		{"while true with a break", "local function f() while true do if redis.call('EXISTS', KEYS[1]) == 1 then break end return KEYS[1], 'x' end end\nredis.call('SET', f())",
			"scripts/x.lua:6:12: warning: wrong number of arguments for SET: it takes at least 2 arguments, the call passes 0 or 2 (its last argument is a call of a local function whose paths return different numbers of values): Redis refuses the call at run time on the paths that pass 0", arity},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkAndRun(t, rc, head+tc.body+"\n", tc.want, tc.server, []string{"{t}k"}, "v")
		})
	}
}
