package gen

import (
	"strings"
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestReplyParamAgreesWithServer: a command's reply passed to a local
// function (in place, or through a local holding it) is that reply in the
// function's parameter: a list there is a table, which Redis refuses as a
// command argument; a reply that may be nil is false, on which a
// concatenation fails and which Redis refuses as an argument, and which is
// never nil (v == nil is always false; not for a local passed that holds
// the reply on some paths only, and another value on others). Tested first, in the function or
// before the call, it is taken without a warning, and the server runs it.
func TestReplyParamAgreesWithServer(t *testing.T) {
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		refused = "Lua redis lib command arguments must be strings or integers"
		table   = `scripts/x.lua:4:48: argument 2 of SET is v (the reply of KEYS a call passes it), an array (a table in Lua): Redis refuses the call at run time ("Lua redis lib command arguments must be strings or integers")`
		arg     = `scripts/x.lua:4:48: warning: argument 2 of SET is v (the reply of GET a call passes it), which is false when GET replies nil: Redis refuses the call at run time ("Lua redis lib command arguments must be strings or integers"); test v first (if not v then ... end), or give it a default where it is assigned (redis.call(...) or '')`
		concat  = `scripts/x.lua:4:50: warning: concatenation (..) of v (the reply of GET a call passes it), which is false when GET replies nil: Lua fails the script at run time ("attempt to concatenate local 'v' (a boolean value)"); test v first (if not v then ... end), or give it a default where it is assigned (redis.call(...) or '')`
		never   = `scripts/x.lua:4:26: == compares v (the reply of GET a call passes it) with nil, but a reply is never nil (Redis turns a nil reply into false): it is always false; test it with not, or compare with false`
		set     = "local function f(v) redis.call('SET', KEYS[1], v) end\n"
		cat     = "local function f(v) redis.call('SET', KEYS[1], v .. 'x') end\n"
		get     = "redis.call('GET', KEYS[2])"
		get1    = "redis.call('GET', KEYS[1])"
		del     = "redis.call('DEL', KEYS[1], KEYS[2])\n"
	)
	line5 := func(s string) string { return strings.Replace(s, ":4:", ":5:", 1) }
	for _, tc := range []struct {
		name, body, want, server string // server: part of Redis's error, "" for none
	}{
		{"a list", set + "f(redis.call('KEYS', '*'))\nredis.call('DEL', KEYS[2])", table, refused},
		{"a nil reply, an argument", set + "f(" + get + ")", arg, refused},
		{"a nil reply, concatenated", cat + "f(" + get + ")", concat, "attempt to concatenate local 'v' (a boolean value)"},
		{"a nil reply held by a local", cat + "local r = " + get + "\nf(r)", concat, "attempt to concatenate local 'v' (a boolean value)"},
		// A command the function runs on the key the reply is of runs
		// after the reply was taken: it makes sure of no value there.
		{"a nil reply of the key the function writes, an argument", del + "local function f(v) redis.call('SET', KEYS[1], v) end\nf(" + get1 + ")", line5(arg), refused},
		{"a nil reply of the key the function writes, concatenated", del + "local function f(v) redis.call('SET', KEYS[1], v .. 'x') end\nf(" + get1 + ")", line5(concat), "attempt to concatenate local 'v' (a boolean value)"},
		{"a nil reply of the key the function writes, held by a local", del + "local function f(v) redis.call('SET', KEYS[1], v .. 'x') end\nlocal r = " + get1 + "\nf(r)", line5(concat), "attempt to concatenate local 'v' (a boolean value)"},
		// Unless a call of it written before ran them already.
		{"a reply of the key the function wrote in an earlier call", del + "local function f(v) redis.call('SET', KEYS[1], v .. 'x') end\nf('a')\nf(" + get1 + ")", "", ""},
		{"a nil reply of the key the function writes, taken before an earlier call", del + "local function f(v) redis.call('SET', KEYS[1], v .. 'x') end\nlocal r = " + get1 + "\nf('a')\nf(r)", line5(concat), "attempt to concatenate local 'v' (a boolean value)"},
		{"compared with nil", "local function f(v) if v == nil then return end redis.call('DEL', KEYS[1]) end\nf(" + get + ")", never, ""},
		// A call out of sight (pcall(f, nil), through a table or an
		// alias) may pass the function anything: nil too.
		{"compared with nil, pcall passing nil too", "local function f(v) if v == nil then return end redis.call('DEL', KEYS[1]) end\nf(" + get + ")\npcall(f, nil)", "", ""},
		{"compared with nil, a call through a table passing nil too", "local function f(v) if v == nil then return end redis.call('DEL', KEYS[1]) end\nf(" + get + ")\nlocal m = {f = f}\nm.f(nil)", "", ""},
		{"compared with nil, a call passing nil too", "local function f(v) if v == nil then return end redis.call('DEL', KEYS[1]) end\nf(" + get + ")\nf(nil)", "", ""},
		// A local that holds the reply on some paths only may hold nil or
		// a number on the others: the comparison is no reply's.
		{"compared with nil, a local holding nil on some paths", "local function f(v) if v == nil then return end redis.call('DEL', KEYS[1]) end\nlocal r = " + get + "\nif KEYS[1] ~= KEYS[2] then r = nil end\nf(r)", "", ""},
		{"compared with a number, a local holding it on some paths", "local function f(v) if v == 5 then return end redis.call('DEL', KEYS[1]) end\nlocal r = " + get + "\nif KEYS[1] ~= KEYS[2] then r = 5 end\nf(r)", "", ""},
		// A function that tests the parameter's type deals with a list
		// where the test shows one: the other calls pass strings.
		{"a list, its type tested", "local function f(v) if type(v) == 'table' then redis.call('SET', KEYS[1], table.concat(v, ',')) return end redis.call('SET', KEYS[1], v) end\nf(redis.call('LRANGE', KEYS[2], 0, -1))\nf('x')", "", ""},
		{"a list, its type held by a local", "local function f(v) local t = type(v) if t == 'table' then for _, x in ipairs(v) do redis.call('SET', KEYS[1], x) end return end redis.call('SET', KEYS[1], v) end\nf(redis.call('LRANGE', KEYS[2], 0, -1))\nf('x')", "", ""},
		{"tested in the function", "local function f(v) if v then redis.call('SET', KEYS[1], v .. 'x') end end\nf(" + get + ")", "", ""},
		{"tested before the call", cat + "local r = " + get + "\nif r then f(r) end", "", ""},
		{"an integer reply", cat + "f(redis.call('INCR', KEYS[2]))", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @key k2\n-- @return none\n" + tc.body + "\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}k", "{t}missing"})
		})
	}
}
