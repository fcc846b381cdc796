package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestTonumberReplyParamAgreesWithServer: tonumber of a parameter a call
// passes a command's reply (local function f(v) ... tonumber(v) + 1 ...
// end; f(redis.call('GET', k))), in place or held by a local, is nil when
// the reply is: arithmetic on it fails on the server then, and the checker
// warns of it. Tested first, given a default, or passed only strings, it
// is taken, and the server runs it.
func TestTonumberReplyParamAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		get     = "\nf(redis.call('GET', KEYS[2]))"
		inPlace = `scripts/x.lua:4:60: warning: arithmetic (+) on tonumber(v (the reply of GET a call passes it)), which is nil when GET replies nil: Lua fails the script at run time ("attempt to perform arithmetic on a nil value"); hold it in a local and test that first (if not v then ... end), or give a default (tonumber(redis.call(...) or '0'))`
		local   = `scripts/x.lua:4:72: warning: arithmetic (+) on n (tonumber of v (the reply of GET a call passes it)), which is nil when GET replies nil: Lua fails the script at run time ("attempt to perform arithmetic on local 'n' (a nil value)"); test n first (if not n then ... end), or give it a default where it is assigned (tonumber(redis.call(...) or '0'))`
	)
	for _, tc := range []struct {
		name, body, want, server string // server: part of Redis's error, "" for none
	}{
		{"in place", "local function f(v) redis.call('SET', KEYS[1], tonumber(v) + 1) end" + get, inPlace, "attempt to perform arithmetic on a nil value"},
		{"held by a local", "local function f(v) local n = tonumber(v) redis.call('SET', KEYS[1], n + 1) end" + get, local, "attempt to perform arithmetic on local 'n' (a nil value)"},
		{"the local tested", "local function f(v) local n = tonumber(v) if n then redis.call('SET', KEYS[1], n + 1) end end" + get, "", ""},
		{"a default", "local function f(v) redis.call('SET', KEYS[1], (tonumber(v) or 0) + 1) end" + get, "", ""},
		{"an integer reply", "local function f(v) redis.call('SET', KEYS[1], tonumber(v) + 1) end\nf(redis.call('INCR', KEYS[2]))", "", ""},
		{"passed a string", "local function f(v) redis.call('SET', KEYS[1], tonumber(v) + 1) end\nf('5')\nredis.call('DEL', KEYS[2])", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @key k2\n-- @return none\n" + tc.body + "\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}k", "{t}missing"})
		})
	}
}
