package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestEndlessLoopConditionAgreesWithServer: while 1 do ... end (or any
// number or string as the condition, which Lua takes as true) is left only
// by a break or a return, as while true is: a local given a value at each
// break holds it after the loop, and a function ending in such a loop
// never reaches its end, where it would return nothing. Such correct
// scripts are taken, and the server runs them; repeat ... until nil, which
// never ends by its condition, likewise.
func TestEndlessLoopConditionAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	for _, cond := range []string{"true", "1", "0", "'x'"} {
		for _, tc := range []struct{ name, body string }{
			{"a reply replaced at the break", "local v = redis.call('GET', KEYS[1])\nwhile " + cond + " do v = 'x' break end\nredis.call('SET', KEYS[1], v .. 'y')"},
			{"a local given a value at the break", "local v\nwhile " + cond + " do v = 'x' break end\nredis.call('SET', KEYS[1], v)"},
			{"a function ending in the loop", "local function f() while " + cond + " do if KEYS[1] then return 'a' end end end\nredis.call('SET', KEYS[1], f())"},
		} {
			t.Run(cond+", "+tc.name, func(t *testing.T) {
				src := "-- @key k\n-- @return none\n" + tc.body + "\n"
				checkAndRun(t, rc, src, "", "", []string{"{t}missing"})
			})
		}
	}
	t.Run("repeat until nil, a function ending in it", func(t *testing.T) {
		src := "-- @key k\n-- @return none\nlocal function f() repeat if KEYS[1] then return 'a' end until nil end\nredis.call('SET', KEYS[1], f())\n"
		checkAndRun(t, rc, src, "", "", []string{"{t}k"})
	})
}
