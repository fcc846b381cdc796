package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestSameKeyDeferredCallerAgreesWithServer: a local function's command on
// a key runs where a call of the function runs: a call written on the line
// its body ends on (local function f() ... end f()) runs it there, and a
// call written in another local function runs it where that one is
// called (or never, when it is not). A reply of the key taken after such a
// run holds a value, and the script is taken and runs; one taken before,
// or with no run at all, may be nil, and concatenating it is warned of,
// and fails on the server.
func TestSameKeyDeferredCallerAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		set    = "local function f() redis.call('SET', KEYS[1], 'x') end"
		tail   = "local r = redis.call('GET', KEYS[1])\n"
		use    = "redis.call('SET', KEYS[1], r .. 'y')"
		failed = "attempt to concatenate local 'r' (a boolean value)"
	)
	concat := func(line int) string {
		return "scripts/x.lua:" + string(rune('0'+line)) + `:30: warning: concatenation (..) of r (the reply of GET), which is false when GET replies nil: Lua fails the script at run time ("attempt to concatenate local 'r' (a boolean value)"); test r first (if not r then ... end), or give it a default where it is assigned (redis.call(...) or '')`
	}
	for _, tc := range []struct {
		name, body, want, server string // server: part of Redis's error, "" for none
	}{
		{"called on the line its body ends", set + " f()\n" + tail + use, "", ""},
		{"called from a function called before", set + "\nlocal function g() f() end\ng()\n" + tail + use, "", ""},
		{"called from a function called after", set + "\nlocal function g() f() end\n" + tail + "g()\n" + use, concat(7), failed},
		{"called from a function never called", set + "\nlocal function g() f() end\n" + tail + use, concat(6), failed},
		{"called two deep, before", set + "\nlocal function g() f() end\nlocal function h() g() end\nh()\n" + tail + use, "", ""},
		{"called two deep, after", set + "\nlocal function g() f() end\nlocal function h() g() end\n" + tail + "h()\n" + use, concat(8), failed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @return none\n" + tc.body + "\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}missing:" + tc.name})
		})
	}
}
