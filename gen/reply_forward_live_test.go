package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestReplyForwardedAgreesWithServer: a command's reply passed to a local
// function that passes its parameter on to another (local function f(v)
// g(v) end), through any number of such calls, is that reply in the last
// one's parameter: concatenated untested there, it fails on the server
// when the reply is nil, and the checker warns of it. Tested before it is
// passed on, or in the last function, it is taken, and the server runs it.
func TestReplyForwardedAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		g      = "local function g(v) redis.call('SET', KEYS[1], v .. 'x') end\n"
		get    = "f(redis.call('GET', KEYS[2]))"
		concat = `scripts/x.lua:4:50: warning: concatenation (..) of v (the reply of GET a call passes it), which is false when GET replies nil: Lua fails the script at run time ("attempt to concatenate local 'v' (a boolean value)"); test v first (if not v then ... end), or give it a default where it is assigned (redis.call(...) or '')`
		fails  = "attempt to concatenate local 'v' (a boolean value)"
	)
	for _, tc := range []struct {
		name, body, want, server string // server: part of Redis's error, "" for none
	}{
		{"passed on", g + "local function f(v) g(v) end\n" + get, concat, fails},
		{"passed on twice", g + "local function h(v) g(v) end\nlocal function f(v) h(v) end\n" + get, concat, fails},
		{"held by a local, passed on", g + "local function f(v) g(v) end\nlocal r = redis.call('GET', KEYS[2])\nf(r)", concat, fails},
		{"compared with nil, passed nil too", "local function g(v) if v == nil then return end redis.call('SET', KEYS[1], 'x') end\nlocal function f(v) g(v) end\n" + get + "\nf(nil)", "", ""},
		{"compared with nil, every call passing a reply", "local function g(v) if v == nil then return end redis.call('SET', KEYS[1], 'x') end\nlocal function f(v) g(v) end\n" + get,
			"scripts/x.lua:4:26: == compares v (the reply of GET a call passes it) with nil, but a reply is never nil (Redis turns a nil reply into false): it is always false; test it with not, or compare with false", ""},
		{"tested before it is passed on", g + "local function f(v) if v then g(v) end end\n" + get, "", ""},
		{"tested in the last function", "local function g(v) if v then redis.call('SET', KEYS[1], v .. 'x') end end\nlocal function f(v) g(v) end\n" + get, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @key k2\n-- @return none\n" + tc.body + "\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}k", "{t}missing"})
		})
	}
}
