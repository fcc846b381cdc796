package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestReassignedFunctionAgreesWithServer: a local function the script
// assigns another function after a call of it is written (in a function
// run later, local function g() ... f() ... end; f = function ... end;
// g()) may run as either: what the first one's returns give (nil alone,
// nothing, one value, a table, a command's reply) says nothing of the call,
// which the checker must neither refuse nor warn of; the server runs it.
func TestReassignedFunctionAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	for _, tc := range []struct{ name, first, use, second string }{
		{"past its values", "return 'x'", "local a, b = f() redis.call('SET', KEYS[1], b)", "return 'x', 'y'"},
		{"a table", "return {}", "redis.call('SET', KEYS[1], f())", "return 'x'"},
		{"a table on some paths", "if redis.call('EXISTS', KEYS[1]) == 1 then return {} end return 'x'", "redis.call('SET', KEYS[1], f())", "return 'x'"},
		{"nil alone", "return nil", "redis.call('SET', KEYS[1], f())", "return 'x'"},
		{"nil alone, held", "return nil", "local v = f() redis.call('SET', KEYS[1], v)", "return 'x'"},
		{"nothing", "", "redis.call('ECHO', f()) redis.call('DEL', KEYS[1])", "return 'x'"},
		{"three values", "return KEYS[1], 'x', 'y'", "redis.call('GET', f())", "return KEYS[1]"},
		{"counts on paths", "if redis.call('EXISTS', KEYS[1]) == 1 then return KEYS[1] end return KEYS[1], 'x', 'y'", "redis.call('GET', f())", "return KEYS[1]"},
		{"a reply", "return redis.call('GET', KEYS[1] .. ':none')", "redis.call('SET', KEYS[1], f())", "return 'x'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @return none\nlocal function f() " + tc.first + " end\nlocal function g() " + tc.use + " end\nf = function() " + tc.second + " end\ng()\n"
			checkAndRun(t, rc, src, "", "", []string{"{t}k"})
		})
	}
}
