package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestReplyTwoCallsDeepAgreesWithServer: a local function whose one return
// is a call of another local function written above it, whose one return
// is a command's reply (local function f() return g() end), gives that
// reply, as g() does: concatenated untested, in place or through a local,
// it fails on the server when the reply is nil, and the checker warns of
// it. Tested first, it is taken, and the server runs it.
func TestReplyTwoCallsDeepAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		fns     = "local function g() return redis.call('GET', KEYS[1]) end\nlocal function f() return g() end\n"
		inPlace = `scripts/x.lua:5:32: warning: concatenation (..) of the reply of GET that f() returns, which is false when GET replies nil: Lua fails the script at run time ("attempt to concatenate a boolean value"); hold it in a local and test that first (if not v then ... end), or give a default (redis.call(...) or '')`
		local   = `scripts/x.lua:6:30: warning: concatenation (..) of r (the reply of GET), which is false when GET replies nil: Lua fails the script at run time ("attempt to concatenate local 'r' (a boolean value)"); test r first (if not r then ... end), or give it a default where it is assigned (redis.call(...) or '')`
	)
	for _, tc := range []struct {
		name, body, want, server string // server: part of Redis's error, "" for none
	}{
		{"in place", fns + "redis.call('SET', KEYS[1], f() .. 'x')", inPlace, "attempt to concatenate a boolean value"},
		{"held by a local", fns + "local r = f()\nredis.call('SET', KEYS[1], r .. 'x')", local, "attempt to concatenate local 'r' (a boolean value)"},
		{"tested", fns + "local r = f()\nif r then redis.call('SET', KEYS[1], r .. 'x') end", "", ""},
		{"a default", fns + "redis.call('SET', KEYS[1], (f() or '') .. 'x')", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @return none\n" + tc.body + "\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}missing"})
		})
	}
}
