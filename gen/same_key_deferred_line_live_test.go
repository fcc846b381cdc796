package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestSameKeyDeferredOneLineAgreesWithServer: a command in a local function
// written on the line of another local function (local function f() ...
// end local function g() redis.call('SET', k, 'v') end) runs where g is
// called, not f: g called before the reply of the key is taken makes sure
// of a value in it, and the script is taken and runs on a missing key.
func TestSameKeyDeferredOneLineAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	for _, tc := range []struct{ name, fns string }{
		{"after a function never called", "local function f() return 1 end local function g() redis.call('SET', KEYS[1], 'v') end"},
		{"before a function never called", "local function g() redis.call('SET', KEYS[1], 'v') end local function f() return 1 end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @return none\n" + tc.fns + "\ng()\nlocal r = redis.call('GET', KEYS[1])\nredis.call('SET', KEYS[1], r .. 'x')\n"
			checkAndRun(t, rc, src, "", "", []string{"{t}missing:" + tc.name})
		})
	}
}
