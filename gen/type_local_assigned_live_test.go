package gen

import (
	"testing"

	"github.com/scriptlock/scriptlock/internal/redistest"
)

// TestTypeLocalAssignedAgreesWithServer: a local given the type of another
// (local t = type(v)) tests it, read in a condition, while v holds the
// value it held then: declared in a loop's body, it is taken again at each
// pass, and v given a value before it (on some paths, or at the end of
// the body, for the next pass) is tested as it is there. Such correct
// scripts are taken, and the server runs them. A test of t after v is
// given another value (later in the block, or at the end of a loop whose
// body reads a t taken before the loop) tests no more: warned of, and the
// server refuses the call.
func TestTypeLocalAssignedAgreesWithServer(t *testing.T) {
	t.Parallel()
	redistest.RequireBinaries(t)
	rc := redistest.Server(t).Client(t)
	const (
		refused = "Lua redis lib command arguments must be strings or integers"
		mayNil  = `warning: argument 2 of redis.call is v, a local that may hold nil or false there (declared without a value, or assigned nil or false, and given one only on some paths): Redis refuses the call at run time on those paths ("Lua redis lib command arguments must be strings or integers"); give it a value on every path, or test it first (if v then ... end)`
		reply   = `warning: argument 2 of SET is v (the reply of GET), which is false when GET replies nil: Redis refuses the call at run time ("Lua redis lib command arguments must be strings or integers"); test v first (if not v then ... end), or give it a default where it is assigned (redis.call(...) or '')`
	)
	for _, tc := range []struct {
		name, body, want, server string // server: part of Redis's error, "" for none
	}{
		{"in a loop, v given nil at the end", "local v = ARGV[1]\nfor i = 1, 2 do\nlocal t = type(v)\nif t == 'string' then redis.call('SET', KEYS[1], v) end\nv = nil\nend", "", ""},
		{"in a loop, v given false at the end", "local v = ARGV[1]\nfor i = 1, 2 do\nlocal t = type(v)\nif t == 'string' then redis.call('SET', KEYS[1], v) end\nv = false\nend", "", ""},
		{"in a while loop", "local v = ARGV[1]\nlocal n = 0\nwhile n < 2 do\nn = n + 1\nlocal t = type(v)\nif t == 'string' then redis.call('SET', KEYS[1], v) end\nv = nil\nend", "", ""},
		{"in a loop, given a value where nil", "local v\nfor i = 1, 2 do\nlocal t = type(v)\nif t == 'nil' then v = ARGV[1] end\nredis.call('SET', KEYS[1], v)\nend", "", ""},
		{"v given a value on some paths before", "local v\nif ARGV[1] == 'a' then v = ARGV[1] end\nlocal t = type(v)\nif t == 'string' then redis.call('SET', KEYS[1], v) end", "", ""},
		{"v given nil after", "local v = ARGV[1]\nlocal t = type(v)\nv = nil\nif t == 'string' then redis.call('SET', KEYS[1], v) end", "scripts/x.lua:7:50: argument 2 of redis.call is v, which holds nil there: Redis refuses it at run time (command arguments must be strings or numbers)", refused},
		{"taken before the loop, v given nil in it", "local v = ARGV[1]\nlocal t = type(v)\nfor i = 1, 2 do\nif t == 'string' then redis.call('SET', KEYS[1], v) end\nv = nil\nend", "scripts/x.lua:7:50: " + mayNil, refused},
		{"in a loop, a reply tested not nil", "local v = redis.call('GET', KEYS[1])\nfor i = 1, 2 do\nlocal t = type(v)\nif t ~= 'nil' then redis.call('SET', KEYS[1], v) end\nv = ARGV[1]\nend", "scripts/x.lua:7:47: " + reply, refused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "-- @key k\n-- @arg a string\n-- @return none\n" + tc.body + "\n"
			checkAndRun(t, rc, src, tc.want, tc.server, []string{"{t}" + tc.name}, "a") // (a key of its own: missing)
		})
	}
}
