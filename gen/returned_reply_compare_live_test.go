package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestReturnedReplyCompareAgreesWithServer: a call of a local function whose
// one return is the reply of a redis.call written there is that reply, in a
// comparison too: never nil (false for a nil reply), so f() == nil, or v
// == nil of a local given f(), is always false, as the reply compared in
// place is, and refused; the server shows it, refusing the redis.call that
// gets the false the test lets through. Compared with false, it is
// accepted and runs.
func TestReturnedReplyCompareAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		refused = "Lua redis lib command arguments must be strings or integers"
		fn      = "local function f() return redis.call('GET', KEYS[1]) end\n"
		never   = ", but a reply is never nil (Redis turns a nil reply into false): it is always false; test it with not, or compare with false"
	)
	for _, tc := range []struct {
		name, body, want, server string // server: part of Redis's error, "" for none
	}{
		{"in place", "if f() == nil then return end\nredis.call('SET', KEYS[1], f())",
			"scripts/x.lua:4:8: == compares the reply of GET that f() returns with nil" + never + "\n" +
				`scripts/x.lua:5:28: warning: argument 2 of SET is the reply of GET that f() returns, which is false when GET replies nil: Redis refuses the call at run time ("Lua redis lib command arguments must be strings or integers"); hold it in a local and test that first (if not v then ... end), or give a default (redis.call(...) or '')`, refused},
		{"through a local", "local v = f()\nif v == nil then return end\nredis.call('SET', KEYS[1], v)",
			"scripts/x.lua:5:6: == compares v (the reply of GET) with nil" + never, refused},
		{"through a local, type(v) == 'nil'", "local v = f()\nif type(v) == 'nil' then return end\nredis.call('SET', KEYS[1], v)",
			"scripts/x.lua:5:12: == compares v (the reply of GET) with nil" + never, refused},
		{"with false", "local v = f()\nif v == false then return end\nredis.call('SET', KEYS[1], v)", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @return none\n" + fn + tc.body + "\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}missing"})
		})
	}
}
