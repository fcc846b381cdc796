package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestReturnedReplyAgreesWithServer: a call of a local function whose one
// return gives the reply of a redis.call written there (local function f()
// return redis.call('GET', KEYS[1]) end) is that reply: false when GET
// replies nil. Passed to redis.call untested, in place or through a local,
// Redis refuses it ("Lua redis lib command arguments must be strings or
// integers"), and the checker must warn, as for the reply written in place.
// With a default or a test first, it is accepted, and the server runs it.
func TestReturnedReplyAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		refused = "Lua redis lib command arguments must be strings or integers"
		fn      = "local function f() return redis.call('GET', KEYS[1]) end\n"
	)
	for _, tc := range []struct {
		name, body, want, server string // server: part of Redis's error, "" for none
	}{
		{"in place", "redis.call('SET', KEYS[1], f())",
			`scripts/x.lua:4:28: warning: argument 2 of SET is the reply of GET that f() returns, which is false when GET replies nil: Redis refuses the call at run time ("Lua redis lib command arguments must be strings or integers"); hold it in a local and test that first (if not v then ... end), or give a default (redis.call(...) or '')`, refused},
		{"through a local", "local v = f()\nredis.call('SET', KEYS[1], v)",
			`scripts/x.lua:5:28: warning: argument 2 of SET is v (the reply of GET), which is false when GET replies nil: Redis refuses the call at run time ("Lua redis lib command arguments must be strings or integers"); test v first (if not v then ... end), or give it a default where it is assigned (redis.call(...) or '')`, refused},
		{"with a default", "redis.call('SET', KEYS[1], f() or '')", "", ""},
		{"tested first", "local v = f()\nif v then redis.call('SET', KEYS[1], v) end", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @return none\n" + fn + tc.body + "\nredis.call('DEL', KEYS[1])\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}missing"})
		})
	}
}
