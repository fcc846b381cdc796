package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestNotNilTestLeavesFalseAgreesWithServer: v ~= nil and type(v) ~= 'nil'
// show v not nil, and no more: a command's reply Redis gave as nil is
// false, which passes them. A local that may hold such a reply, or a
// parameter a call passes false or a comparison, tested only so and then
// passed to redis.call or concatenated, is warned of, and the server
// refuses the call (or Lua the concatenation) when it holds false. A test
// of its truth settles it, and a reply that is never nil (INCR) needs
// none: such scripts are taken, and the server runs them.
func TestNotNilTestLeavesFalseAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		refused = "Lua redis lib command arguments must be strings or integers"
		reply   = `warning: argument 2 of SET is v (the reply of GET), which is false when GET replies nil: Redis refuses the call at run time ("Lua redis lib command arguments must be strings or integers"); test v first (if not v then ... end), or give it a default where it is assigned (redis.call(...) or '')`
		param   = `warning: argument 2 of redis.call is v, a parameter that a call of its function passes nil or false (f(nil), f(false), or no value there): Redis refuses the call at run time on that call ("Lua redis lib command arguments must be strings or integers"); pass a value, or test it first (if v then ... end)`
		given   = "local v = nil\nif ARGV[1] == 'a' then v = redis.call('GET', KEYS[1]) end\n"
	)
	for _, tc := range []struct {
		name, body, want, server string // server: part of Redis's error, "" for none
	}{
		{"v ~= nil", given + "if v ~= nil then redis.call('SET', KEYS[1], v) end", "scripts/x.lua:6:45: " + reply, refused},
		{"nil ~= v", given + "if nil ~= v then redis.call('SET', KEYS[1], v) end", "scripts/x.lua:6:45: " + reply, refused},
		{"type(v) ~= 'nil'", given + "if type(v) ~= 'nil' then redis.call('SET', KEYS[1], v) end", "scripts/x.lua:6:53: " + reply, refused},
		{"not (v == nil)", given + "if not (v == nil) then redis.call('SET', KEYS[1], v) end", "scripts/x.lua:6:51: " + reply, refused},
		{"else of type(v) == 'nil'", given + "if type(v) == 'nil' then return end\nredis.call('SET', KEYS[1], v)", "scripts/x.lua:7:28: " + reply, refused},
		{"concatenated", given + "if v ~= nil then redis.call('SET', KEYS[1], v .. 'x') end",
			`scripts/x.lua:6:47: warning: concatenation (..) of v (the reply of GET), which is false when GET replies nil: Lua fails the script at run time ("attempt to concatenate local 'v' (a boolean value)"); test v first (if not v then ... end), or give it a default where it is assigned (redis.call(...) or '')`,
			"attempt to concatenate"},
		{"then its truth", given + "if v ~= nil then if v then redis.call('SET', KEYS[1], v) end end", "", ""},
		{"its truth, then v ~= nil", given + "if v then if v ~= nil then redis.call('SET', KEYS[1], v) end end", "", ""},
		{"a reply never nil", "local v = nil\nif ARGV[1] == 'a' then v = redis.call('INCR', KEYS[1]) end\nif v ~= nil then redis.call('SET', KEYS[1], v) end", "", ""},
		{"a parameter passed false", "local function f(v) if type(v) ~= 'nil' then redis.call('SET', KEYS[1], v) end end\nf(false)\nredis.call('SET', KEYS[1], ARGV[1])", "scripts/x.lua:4:73: " + param, refused},
		{"a parameter passed a comparison", "local function f(v) if type(v) ~= 'nil' then redis.call('SET', KEYS[1], v) end end\nf(ARGV[1] == 'b')", "scripts/x.lua:4:73: " + param, refused},
		{"a parameter passed nil or a string", "local function f(v) if type(v) ~= 'nil' then redis.call('SET', KEYS[1], v) end end\nf(nil)\nf(ARGV[1])", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @arg a string\n-- @return none\n" + tc.body + "\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}missing"}, "a")
		})
	}
}
