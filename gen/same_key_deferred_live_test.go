package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestSameKeyDeferredAgreesWithServer: a command on a key that a local
// function runs makes sure of a value in a reply of that key only when the
// function is called before the reply is taken, not where the function is
// written: a function written above but called after the reply leaves it
// maybe nil, and concatenating it untested is warned of, and fails on the
// server. One called before (also when the reply is taken in another
// local function called after) is still taken without a warning, and the
// server runs it.
func TestSameKeyDeferredAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		set    = "local function f() redis.call('SET', KEYS[1], 'x') end\n"
		concat = `scripts/x.lua:6:30: warning: concatenation (..) of r (the reply of GET), which is false when GET replies nil: Lua fails the script at run time ("attempt to concatenate local 'r' (a boolean value)"); test r first (if not r then ... end), or give it a default where it is assigned (redis.call(...) or '')`
	)
	for _, tc := range []struct {
		name, body, want, server string // server: part of Redis's error, "" for none
	}{
		{"called after", set + "local r = redis.call('GET', KEYS[1])\nf()\nredis.call('SET', KEYS[1], r .. 'y')", concat, "attempt to concatenate local 'r' (a boolean value)"},
		{"never called", set + "local r = redis.call('GET', KEYS[1])\nlocal g = 1\nredis.call('SET', KEYS[1], r .. 'y')", concat, "attempt to concatenate local 'r' (a boolean value)"},
		{"called before", set + "f()\nlocal r = redis.call('GET', KEYS[1])\nredis.call('SET', KEYS[1], r .. 'y')", "", ""},
		{"the reply taken in a function called after", set + "local function g() return redis.call('GET', KEYS[1]) end\nf()\nredis.call('SET', KEYS[1], g() .. 'y')", "", ""},
		{"in the same function", "local function f()\nredis.call('SET', KEYS[1], 'x')\nlocal r = redis.call('GET', KEYS[1])\nredis.call('SET', KEYS[1], r .. 'y') end\nf()", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @return none\n" + tc.body + "\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}missing:" + tc.name})
		})
	}
}
